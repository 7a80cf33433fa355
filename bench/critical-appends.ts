import type { EventStore } from "../src/log/event-store.js";
import { perSecond } from "./stats.js";
import { turnAdded } from "./workload.js";

const WARMUP = 50;

/** A throughput measured on as many events as fitted in its time cap. */
export interface CappedRate {
  perSecond: number;
  /** Events actually timed: `n`, or fewer when the cap ended the loop early. */
  events: number;
}

/**
 * Row 1: events/s of up to `n` critical `turn.added` appends, each awaited before the next, so
 * every append is its own durable commit (no group commit can help). Stops early once `capMs`
 * has passed, so a slow adapter cannot stretch the whole bench; the rate stays per event timed.
 */
export async function criticalAppends(
  store: EventStore,
  n: number,
  capMs = Number.POSITIVE_INFINITY,
): Promise<CappedRate> {
  for (let i = 0; i < WARMUP; i++) await store.append(turnAdded("bench", i));
  const start = performance.now();
  let events = 0;
  while (events < n && performance.now() - start < capMs) {
    await store.append(turnAdded("bench", events));
    events += 1;
  }
  return { perSecond: perSecond(events, performance.now() - start), events };
}
