import type { EventStore } from "../log/index.js";
import type { SpanRecord } from "./span-record.js";
import { TraceFold } from "./trace-fold.js";

/** Options of `readTraces`. */
export interface ReadTracesOptions {
  /** See `TraceFoldOptions.captureContent`. */
  captureContent?: boolean;
  /** Fold only up to this seq (inclusive). Default: the head when the read began. */
  until?: number;
}

/**
 * The spans of every run in `continuity`'s log, after the fact, folded by the same `TraceFold`
 * as live export (so ids and times match what was exported live). Runs the log leaves open (a
 * crash, or a run still going) end at their newest event with an error status saying so.
 * Streams the log in pages; yields spans in the order they end.
 */
export async function* readTraces(
  store: EventStore,
  continuity: string,
  options: ReadTracesOptions = {},
): AsyncIterable<SpanRecord> {
  const fold = new TraceFold({
    continuity,
    ...(options.captureContent !== undefined ? { captureContent: options.captureContent } : {}),
  });
  for await (const event of store.read({
    continuity,
    ...(options.until !== undefined ? { until: options.until } : {}),
  })) {
    yield* fold.push(event);
  }
  yield* fold.finish();
}
