import { chainHash, GENESIS_HASH, type SpoolEvent } from "../../spec/index.js";
import type { PendingEvent } from "../log-backend.js";

/** A batch positioned at its seqs and linked into its continuities' chains, as column arrays. */
export interface LinkedBatch {
  /** The events as `write` returns them. */
  stored: SpoolEvent[];
  /** One array per `spool_events` column, in column order, ready for `unnest`. */
  eventColumns: unknown[][];
  /** One array per `spool_continuities` column: each touched continuity's change. */
  continuityColumns: unknown[][];
}

/**
 * Gives `batch` the seqs `first, first + 1, …` and links each event onto its continuity's chain:
 * onto `heads` (the committed head hash per continuity) for the first event of a continuity, onto
 * the event before it in the batch for the rest. Pure; `write` runs it under the head row lock,
 * so `heads` cannot change underneath it.
 */
export function linkBatch(
  batch: readonly PendingEvent[],
  first: number,
  heads: ReadonlyMap<string, string>,
): LinkedBatch {
  const chain = new Map(heads);
  const stored: SpoolEvent[] = [];
  const eventColumns: unknown[][] = Array.from({ length: 12 }, () => []);
  const touched = new Map<
    string,
    { events: number; firstSeq: number; createdAt: string; last: number }
  >();
  batch.forEach(({ event, dataJson, canonical }, index) => {
    const seq = first + index;
    const hash = chainHash(chain.get(event.continuity) ?? GENESIS_HASH, canonical);
    chain.set(event.continuity, hash);
    stored.push({ seq, ...event, stream: { ...event.stream }, hash });
    const { id, continuity, stream, type, ts, actor, origin, criticality } = event;
    const row = [seq, id, continuity, stream.kind, stream.id, type, ts, actor, origin, criticality];
    row.push(dataJson, hash);
    for (const [column, value] of row.entries()) eventColumns[column]!.push(value);
    const seen = touched.get(continuity);
    if (seen) Object.assign(seen, { events: seen.events + 1, last: index });
    else touched.set(continuity, { events: 1, firstSeq: seq, createdAt: ts, last: index });
  });
  const continuityColumns: unknown[][] = Array.from({ length: 7 }, () => []);
  for (const [continuity, { events, firstSeq, createdAt, last: index }] of touched) {
    // The continuity's last event in this batch is its new head.
    const last = stored[index]!;
    const row = [continuity, events, firstSeq, last.seq, createdAt, last.ts, last.hash];
    for (const [column, value] of row.entries()) continuityColumns[column]!.push(value);
  }
  return { stored, eventColumns, continuityColumns };
}
