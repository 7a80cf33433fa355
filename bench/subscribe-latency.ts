import type { EventStore, SubscriptionMessage } from "../src/log/event-store.js";
import { turnAdded } from "./workload.js";

/** Events in the log before subscribing, so the subscription catches up before going live. */
const BACKLOG = 100;
const WARMUP = 20;

/**
 * Row 4: latencies (ms) from just before `writer.append` to the moment a subscriber on `reader`
 * receives that event, for `n` critical appends sent one at a time (each delivery awaited before
 * the next). The subscription first catches up on a backlog and passes its `up-to-date` marker.
 * `writer` and `reader` may be the same store (in-process) or two stores on one log.
 *
 * Each append follows the previous delivery at once, so a subscriber that learns of commits by
 * polling sees every append just after a poll: its p50 then shows the full interval, not half.
 */
export async function subscribeLatencies(
  writer: EventStore,
  reader: EventStore,
  n: number,
): Promise<number[]> {
  const continuity = "latency";
  await writer.appendBatch(Array.from({ length: BACKLOG }, (_, i) => turnAdded(continuity, i)));
  // Keeps node alive while the subscriber waits: an adapter whose only pending work is an unref'd
  // timer (SQLite's foreign-commit poll was) would otherwise let the process exit mid-measure.
  const keepAlive = setInterval(() => {}, 1_000);
  const stop = new AbortController();
  const messages = reader.subscribe({ continuity, signal: stop.signal })[Symbol.asyncIterator]();
  try {
    let caughtUp = 0;
    while (true) {
      const next = await messages.next();
      if (next.done) throw new Error("subscription ended during catch-up");
      if (next.value.type === "up-to-date") break;
      caughtUp += 1;
    }
    if (caughtUp !== BACKLOG) throw new Error(`caught up on ${caughtUp} of ${BACKLOG} events`);
    const latencies: number[] = [];
    for (let i = 0; i < WARMUP + n; i++) {
      const start = performance.now();
      const appended = writer.append(turnAdded(continuity, i));
      const next: IteratorResult<SubscriptionMessage> = await messages.next();
      const ms = performance.now() - start;
      const stored = await appended;
      if (next.done || next.value.type !== "event" || next.value.event.seq !== stored.seq) {
        throw new Error(`subscriber missed event ${stored.seq}`);
      }
      if (i >= WARMUP) latencies.push(ms);
    }
    return latencies;
  } finally {
    clearInterval(keepAlive);
    stop.abort();
    await messages.return?.();
  }
}
