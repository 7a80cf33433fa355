/**
 * Where the scheduler reads time and sets timers (timeouts, retry backoff). Injected so tests run
 * on fake time and replays re-derive the same durations.
 *
 * Contract: `now()` is monotonic milliseconds (any origin); `setTimer` calls `callback` once after
 * `ms` milliseconds unless the returned function was called first. The scheduler never sleeps in
 * any other way.
 */
export interface SchedulerClock {
  now(): number;
  setTimer(ms: number, callback: () => void): () => void;
}

/**
 * The real clock: `performance.now()` and `setTimeout`. Under Vitest's fake timers both are faked,
 * so tests may use this clock with `vi.useFakeTimers()`.
 */
export const systemClock: SchedulerClock = {
  now: () => performance.now(),
  setTimer(ms, callback) {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};
