import type { EventStore } from "../log/index.js";
import {
  type EventData,
  nearestName,
  SpoolError,
  type SpoolErrorOptions,
  type SpoolEvent,
} from "../spec/index.js";
import { readChunkLines } from "./source-chunk.js";

/** What `recallSourceLines` reads: a source's chunks `from_chunk`..`to_chunk`, bounded. */
export interface RecallQuery {
  source: string;
  from_chunk: number;
  to_chunk: number;
  /** Lines at most (default 2,000). */
  max_lines?: number;
  /** Bytes of text at most, UTF-8, notes included (default 64 KiB; at least 256). */
  max_bytes?: number;
}

/** The lines of a chunk range, as text: each chunk under a `--- chunk #n ---` line. */
export interface RecalledLines {
  text: string;
  /** Source lines in `text` (chunk headings and notes not counted). */
  lines: number;
  /** Whether the range did not fit the bounds (or reaches past the last logged chunk). */
  truncated: boolean;
  /** The chunk to ask for next to read on, when the range was cut short. */
  next_chunk?: number;
}

/** Codes of `SourceRecallError`. */
export type SourceRecallErrorCode =
  | "source.unknown"
  | "source.range-unavailable"
  | "source.bad-range";

/** A recall of a source the continuity does not have, or of chunks it has not logged. */
export class SourceRecallError extends SpoolError {
  declare readonly code: SourceRecallErrorCode;

  constructor(code: SourceRecallErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}

/** Lines a recall returns at most when the query names no `max_lines`. */
export const DEFAULT_RECALL_LINES = 2_000;
/** Bytes of text a recall returns at most when the query names no `max_bytes`. */
export const DEFAULT_RECALL_BYTES = 64 * 1024;

const CHUNK_TYPES = ["source.chunk"] as const;

/** Bytes kept free for the note that ends a recall cut short. */
const NOTE_BYTES = 160;

/**
 * The lines of chunks `from_chunk`..`to_chunk` of a source, in full, read from the log and its
 * artifacts, within `max_lines` and `max_bytes`. Whole chunks are returned while they fit; the
 * first chunk that does not ends the text and is `next_chunk`, except when it is the first one,
 * whose lines are then returned as far as they fit (the text says how many are left out).
 * A range reaching past the last logged chunk is returned up to it (`truncated`).
 *
 * Finds the first chunk by a binary search over `seq` (O(log of the log's size) reads of one event each),
 * so recalling an old chunk costs the same in a long log. Throws `SourceRecallError`:
 * `source.unknown` (naming the continuity's sources), `source.range-unavailable` (saying which
 * chunks exist), `source.bad-range`.
 */
export async function recallSourceLines(
  store: EventStore,
  continuity: string,
  query: RecallQuery,
): Promise<RecalledLines> {
  const { source, from_chunk: from, to_chunk: to } = query;
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < from) {
    throw new SourceRecallError(
      "source.bad-range",
      `chunks ${from}..${to} are no range: from_chunk must be a whole number from 1, to_chunk at least from_chunk`,
      { hint: 'Ask for e.g. {"from_chunk": 3, "to_chunk": 5}', details: { source, from, to } },
    );
  }
  const probe = chunkProbe(store, continuity, source);
  const first = await probe(0);
  if (!first) throw await noChunks(store, continuity, source);
  const last = await lastChunk(store, probe);
  const exists = `chunks ${chunkN(first)}-${chunkN(last)} exist`;
  if (from > chunkN(last) || to < chunkN(first)) {
    throw new SourceRecallError(
      "source.range-unavailable",
      `source "${source}" has not logged chunks ${from}-${to}: ${exists}`,
      {
        hint: `Ask for a range within ${chunkN(first)}-${chunkN(last)}`,
        details: { source, first: chunkN(first), last: chunkN(last) },
      },
    );
  }
  const start = await afterSeqOfChunkBefore(store, probe, from);
  const maxLines = clamp(query.max_lines ?? DEFAULT_RECALL_LINES, 1, 100_000);
  const maxBytes = clamp(query.max_bytes ?? DEFAULT_RECALL_BYTES, 256, 16 * 1024 * 1024);
  const out = new RecallText(maxLines, maxBytes);
  for await (const event of store.read({
    continuity,
    stream: { kind: "source", id: source },
    types: CHUNK_TYPES,
    after: start,
    until: last.seq,
  })) {
    const data = event.data as EventData<"source.chunk">;
    if (data.n > to) break;
    const added = out.add(data.n, data.channel, await readChunkLines(store, event));
    if (added !== "whole") {
      const next = added === "partial" ? data.n + 1 : data.n;
      return out.result(next <= Math.min(to, chunkN(last)) ? next : undefined);
    }
  }
  if (to > chunkN(last)) {
    out.note(`(chunks after ${chunkN(last)} are not logged yet)`);
  }
  return out.result(undefined);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(value)));
}

const chunkN = (event: SpoolEvent) => (event.data as EventData<"source.chunk">).n;

type Probe = (after: number) => Promise<SpoolEvent | undefined>;

/** The first chunk of `source` after `seq` (one read of at most one event). */
function chunkProbe(store: EventStore, continuity: string, source: string): Probe {
  return async (after) => {
    for await (const event of store.read({
      continuity,
      stream: { kind: "source", id: source },
      types: CHUNK_TYPES,
      after,
      limit: 1,
    }))
      return event;
    return undefined;
  };
}

/**
 * The seq to read after to meet the first chunk numbered `from` or more: the seq of the last
 * chunk numbered below it (0 when none). Chunk numbers grow with seq, so `probe(a).n` grows with
 * `a` and a binary search finds it.
 */
async function afterSeqOfChunkBefore(store: EventStore, probe: Probe, from: number) {
  const first = await probe(0);
  if (!first || chunkN(first) >= from) return 0;
  let low = 0; // probe(low).n < from
  let high = await store.head(); // probe(high) is undefined or its n >= from
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const found = await probe(middle);
    if (found && chunkN(found) < from) low = middle;
    else high = middle;
  }
  return high;
}

/** The last chunk of the source (there is at least one), by a binary search on seq. */
async function lastChunk(store: EventStore, probe: Probe): Promise<SpoolEvent> {
  let low = 0; // probe(low) exists
  let high = await store.head(); // probe(high) is undefined
  let found = (await probe(0))!;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const event = await probe(middle);
    if (event) {
      low = middle;
      found = event;
    } else high = middle;
  }
  return found;
}

async function noChunks(
  store: EventStore,
  continuity: string,
  source: string,
): Promise<SourceRecallError> {
  const known = new Set<string>();
  for await (const event of store.read({ continuity, types: ["source.added"] }))
    known.add((event.data as EventData<"source.added">).source_id);
  if (known.has(source)) {
    return new SourceRecallError(
      "source.range-unavailable",
      `source "${source}" has not logged any chunk yet`,
      { hint: "Wait for its first delivery", details: { source } },
    );
  }
  const near = nearestName(source, [...known]);
  const list = known.size > 0 ? `its sources are ${[...known].join(", ")}` : "it has no sources";
  return new SourceRecallError(
    "source.unknown",
    `this continuity has no source "${source}"${near ? ` (did you mean "${near}"?)` : ""}: ${list}`,
    { hint: "Name one of its sources", details: { source, sources: [...known] } },
  );
}

/** The recall's text as it grows within its bounds. */
class RecallText {
  private readonly parts: string[] = [];
  private bytes = 0;
  private lines = 0;
  private cut = false;

  constructor(
    private readonly maxLines: number,
    private readonly maxBytes: number,
  ) {}

  /** Adds chunk `n`: `whole`, `partial` (the first chunk, cut to the bounds) or `none` (it did not fit). */
  add(
    n: number,
    channel: string | undefined,
    lines: readonly string[],
  ): "whole" | "partial" | "none" {
    const heading = `--- chunk #${n}${channel ? ` ${channel}` : ""} ---`;
    const cost = (text: string) => Buffer.byteLength(text) + 1;
    const wholeBytes = lines.reduce((sum, line) => sum + cost(line), cost(heading));
    // Room is kept for a closing note, so the text stays within maxBytes whatever follows.
    const room = this.maxBytes - NOTE_BYTES;
    if (this.lines + lines.length <= this.maxLines && this.bytes + wholeBytes <= room) {
      this.push(heading, ...lines);
      this.lines += lines.length;
      return "whole";
    }
    if (this.parts.length > 0) return "none";
    this.push(heading);
    let shown = 0;
    for (const line of lines) {
      if (shown >= this.maxLines || this.bytes + cost(line) > room) break;
      this.push(line);
      shown++;
    }
    if (shown === 0 && lines.length > 0) {
      const left = Math.max(0, room - this.bytes - 16);
      this.push(`${Buffer.from(lines[0]!).subarray(0, left).toString("utf8")}…(line cut)`);
      shown = 1;
    }
    this.lines += shown;
    this.cut = true;
    this.parts.push(
      `(${lines.length - shown} more lines of chunk #${n} not shown: ask again with a larger max_lines or max_bytes)`,
    );
    return "partial";
  }

  /** Ends the text with a note that the range was cut short. */
  note(text: string): void {
    this.parts.push(text);
    this.cut = true;
  }

  result(next: number | undefined): RecalledLines {
    return {
      text: this.parts.join("\n"),
      lines: this.lines,
      truncated: this.cut || next !== undefined,
      ...(next !== undefined ? { next_chunk: next } : {}),
    };
  }

  private push(...texts: string[]): void {
    for (const text of texts) {
      this.parts.push(text);
      this.bytes += Buffer.byteLength(text) + 1;
    }
  }
}
