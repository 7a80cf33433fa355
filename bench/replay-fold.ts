import type { EventStore } from "../src/log/event-store.js";
import type { AnyNewEvent } from "../src/spec/index.js";
import { perSecond } from "./stats.js";
import { DATA_TEXT, replayProjection, STEPS, tokenDelta, turnAdded } from "./workload.js";

/** Events per `appendBatch` call while filling the replay log. */
const FILL_BATCH = 5_000;
/** Continuities the replay log spreads over (one hash chain each). */
const CONTINUITIES = 8;

/**
 * Fills `store` with `n` events (half `turn.added`, half `token.delta`, data about 300 bytes) in
 * `appendBatch` calls of 5,000; returns events/s of the fill (reported, not a row of its own).
 */
export async function fillReplayLog(store: EventStore, n: number): Promise<number> {
  const start = performance.now();
  for (let first = 0; first < n; first += FILL_BATCH) {
    const batch: AnyNewEvent[] = [];
    for (let i = first; i < Math.min(n, first + FILL_BATCH); i++) {
      const continuity = `c${i % CONTINUITIES}`;
      batch.push(
        i % 2 ? tokenDelta(continuity, i, DATA_TEXT, STEPS) : turnAdded(continuity, i, DATA_TEXT),
      );
    }
    await store.appendBatch(batch);
  }
  return perSecond(n, performance.now() - start);
}

/**
 * Row 3: events/s of `store.fold({}, replayProjection)` over the whole log, which must hold
 * `expected` events.
 */
export async function foldReplayLog(store: EventStore, expected: number): Promise<number> {
  const start = performance.now();
  const state = await store.fold({}, replayProjection);
  const ms = performance.now() - start;
  if (state.events !== expected) throw new Error(`fold saw ${state.events} of ${expected}`);
  return perSecond(state.events, ms);
}
