import type { EventStore } from "../log/index.js";
import { createTranscriptProjection } from "./transcript-projection.js";

/** About how many characters `streamTranscript` gathers before it yields a chunk. */
const CHUNK_CHARS = 64 * 1024;

/**
 * The bytes of thread `thread`'s `transcript.jsonl` as the log of `continuity` says they should
 * be, as text chunks in order (each a run of whole lines). Reads the continuity in seq order, page
 * by page, up to the head when it starts (or `until`); holds one chunk in memory at a time.
 */
export async function* streamTranscript(
  store: EventStore,
  continuity: string,
  thread: string,
  options: { until?: number } = {},
): AsyncIterable<string> {
  const projection = createTranscriptProjection(thread);
  let chunk = "";
  const query = options.until === undefined ? { continuity } : { continuity, until: options.until };
  for await (const event of store.read(query)) {
    chunk += projection.push(event);
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk !== "") yield chunk;
}

/**
 * The whole `transcript.jsonl` of `thread` rebuilt from the log: what a live transcript sink
 * writes, byte for byte. Streams the log; only the result is held in memory.
 */
export async function rebuildTranscript(
  store: EventStore,
  continuity: string,
  thread: string,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of streamTranscript(store, continuity, thread)) {
    chunks.push(Buffer.from(chunk, "utf8"));
  }
  return Buffer.concat(chunks);
}

/** The continuity whose log holds thread `thread`'s `thread.started`, or `undefined`. */
export async function findThreadContinuity(
  store: EventStore,
  thread: string,
): Promise<string | undefined> {
  for await (const event of store.read({
    stream: { kind: "thread", id: thread },
    types: ["thread.started"],
    limit: 1,
  })) {
    return event.continuity;
  }
  return undefined;
}
