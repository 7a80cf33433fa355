import { setImmediate as nextTurn } from "node:timers/promises";
import type { EventStore } from "../src/log/event-store.js";
import type { SpoolEvent } from "../src/spec/index.js";
import type { CappedRate } from "./critical-appends.js";
import { perSecond } from "./stats.js";
import { tokenDelta, turnAdded } from "./workload.js";

/** Events per `appendBatch` call. */
export const APPEND_BATCH = 1_000;
/** Droppable appends fired per event-loop turn, as model streams deliver deltas in bursts. */
export const DROPPABLE_BURST = 1_000;

/**
 * Row 2a: events/s of up to `n` droppable `token.delta` appends fired without awaiting any:
 * bursts of 1,000 with an event-loop turn between them, then `flush()` and every promise awaited.
 * Deltas alternate between two blocks (and, with `steps` > 1, go round that many steps) so none
 * coalesce: every append is one stored row, as in the ceiling. Firing stops early once `capMs`
 * has passed (the flush is still timed).
 */
export async function droppableAppends(
  store: EventStore,
  n: number,
  capMs = Number.POSITIVE_INFINITY,
  steps = 1,
): Promise<CappedRate> {
  await store.append(tokenDelta("bench", 0, undefined, steps)); // warm-up: statements prepared
  await store.flush();
  const start = performance.now();
  // Each burst's results are reduced to its seq range as it resolves: like a model stream's
  // sink, the bench does not hold on to every stored delta.
  const bursts: Promise<{ first: number; last: number; count: number }>[] = [];
  let events = 0;
  while (events < n && performance.now() - start < capMs) {
    const burst: Promise<SpoolEvent>[] = [];
    for (let k = 0; k < DROPPABLE_BURST && events < n; k++, events++) {
      burst.push(store.append(tokenDelta("bench", events, undefined, steps)));
    }
    bursts.push(
      Promise.all(burst).then((stored) => ({
        first: stored[0]!.seq,
        last: stored.at(-1)!.seq,
        count: stored.length,
      })),
    );
    await nextTurn();
  }
  await store.flush();
  const ranges = await Promise.all(bursts);
  const ms = performance.now() - start;
  // Every append one row, in order: the bursts' seq ranges tile one gapless range.
  ranges.forEach((range, i) => {
    const next = ranges[i + 1];
    if (range.last - range.first !== range.count - 1 || (next && next.first !== range.last + 1))
      throw new Error("deltas coalesced or lost");
  });
  return { perSecond: perSecond(events, ms), events };
}

/** Row 2b: events/s of `n` critical `turn.added` events in awaited `appendBatch` calls of 1,000. */
export async function batchAppends(store: EventStore, n: number): Promise<number> {
  const batch = (first: number) =>
    Array.from({ length: APPEND_BATCH }, (_, k) => turnAdded("bench", first + k));
  await store.appendBatch(batch(0));
  const start = performance.now();
  for (let first = 0; first < n; first += APPEND_BATCH) await store.appendBatch(batch(first));
  return perSecond(n, performance.now() - start);
}
