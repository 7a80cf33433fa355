/**
 * A continuity whose source has logged a long stream, written fast: the source's `source.added`,
 * then its `source.chunk` events (four realistic log lines each, with a file cursor) and, every
 * `DELIVERY_CHUNKS` chunks, the delivery turn that gave them to the agent and its run (in an old
 * thread), all with the store's `appendBatch` in batches of `FILL_BATCH`: the log a watcher
 * leaves after running a long time, without a model in between.
 */
import type { EventStore } from "../../src/log/index.js";
import type { AnyNewEvent } from "../../src/spec/index.js";
import { logLines } from "../../test/support/log-lines.js";
import { benchUlid, FILL_BATCH, ThreadWriter } from "../continuity/continuity-log.js";

/** The source every bench chunk belongs to. */
export const STREAM_SOURCE = "app-log";
/** Chunks a delivery turn brings. */
export const DELIVERY_CHUNKS = 50;
const LINES_PER_CHUNK = 4;

/** The `source.added` definition of the bench's file source (as the manifest would log it). */
export const STREAM_DEFINITION = {
  id: STREAM_SOURCE,
  kind: "file",
  target: "logs/app.log",
  mode: "cursor",
} as const;

/** Writes the log's chunks and deliveries, numbering them on from where the last call ended. */
export class StreamWriter {
  readonly #continuity: string;
  readonly #lines: Iterator<{ text: string }>;
  #chunks = 0;
  #offset = 0;
  #deliveries = 0;

  constructor(continuity: string) {
    this.#continuity = continuity;
    this.#lines = logLines({ seed: 5, count: Number.MAX_SAFE_INTEGER })[Symbol.iterator]();
  }

  /** Chunks written so far. */
  get written(): number {
    return this.#chunks;
  }

  /** `source.added` for the stream's source. */
  added(): AnyNewEvent {
    return {
      continuity: this.#continuity,
      stream: { kind: "source", id: STREAM_SOURCE },
      type: "source.added",
      data: { source_id: STREAM_SOURCE, definition: STREAM_DEFINITION, by: "manifest" },
    };
  }

  /** The next `count` chunks. */
  chunks(count: number): AnyNewEvent[] {
    const events: AnyNewEvent[] = [];
    for (let i = 0; i < count; i++) {
      const lines = Array.from({ length: LINES_PER_CHUNK }, () => this.#lines.next().value!.text);
      const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
      this.#offset += bytes;
      this.#chunks += 1;
      events.push({
        continuity: this.#continuity,
        stream: { kind: "source", id: STREAM_SOURCE },
        type: "source.chunk",
        data: {
          source_id: STREAM_SOURCE,
          n: this.#chunks,
          lines,
          line_count: lines.length,
          bytes,
          cursor: this.cursor(),
        },
      });
    }
    return events;
  }

  /** The file cursor after the chunks written so far. */
  cursor(): { dev: string; ino: string; offset: number; head: string } {
    return { dev: "2049", ino: "131073", offset: this.#offset, head: "0".repeat(64) };
  }

  /** The delivery turn of the `DELIVERY_CHUNKS` chunks written last, with its id. */
  delivery(): AnyNewEvent {
    this.#deliveries += 1;
    const to = this.#chunks;
    const from = to - DELIVERY_CHUNKS + 1;
    return {
      continuity: this.#continuity,
      type: "turn.added",
      id: benchUlid(10_000_000 + this.#deliveries),
      actor: `source:${STREAM_SOURCE}`,
      origin: "source",
      data: {
        text: `Source ${STREAM_SOURCE} (file logs/app.log): chunks ${from}-${to}, ${DELIVERY_CHUNKS * LINES_PER_CHUNK} lines.`,
        sources: [
          { source_id: STREAM_SOURCE, from_chunk: from, to_chunk: to, cursor: this.cursor() },
        ],
      },
    };
  }
}

/**
 * Fills `continuity` with `chunks` chunks of the stream (a multiple of `DELIVERY_CHUNKS`), each
 * `DELIVERY_CHUNKS` delivered by a turn that a run of an old thread took (one answer each).
 * Returns the writer, to go on with the stream.
 */
export async function fillStream(
  store: EventStore,
  continuity: string,
  chunks: number,
): Promise<StreamWriter> {
  const stream = new StreamWriter(continuity);
  const old = new ThreadWriter(continuity, "old-watcher");
  let pending: AnyNewEvent[] = [stream.added(), old.started()];
  while (stream.written < chunks) {
    pending.push(...stream.chunks(DELIVERY_CHUNKS));
    pending.push(...deliveryRun(stream, old));
    if (pending.length >= FILL_BATCH) {
      await store.appendBatch(pending);
      pending = [];
    }
  }
  if (pending.length > 0) await store.appendBatch(pending);
  return stream;
}

/**
 * A delivery turn and the run that took it: the run's start, `toolSteps` steps with a tool call,
 * a final answer, its end.
 */
export function deliveryRun(
  stream: StreamWriter,
  thread: ThreadWriter,
  toolSteps = 0,
): AnyNewEvent[] {
  const turn = stream.delivery();
  const [, started] = thread.turn(0);
  const run = { ...started!, data: { ...(started!.data as object), turn: turn.id } };
  const steps: AnyNewEvent[] = [];
  for (let i = 0; i < toolSteps; i++) steps.push(...thread.step(false));
  steps.push(...thread.step(true));
  return [turn, run as AnyNewEvent, ...steps, thread.completed(toolSteps + 1)];
}
