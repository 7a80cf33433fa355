/** Where the feed engine reads the time: milliseconds since the Unix epoch. */
export interface FeedClock {
  now(): number;
}

/**
 * The timers the feed engine schedules with. Handles are opaque: whatever `setInterval` /
 * `setTimeout` returned is handed back to the matching `clear…`. Tests pass fakes (or use
 * Vitest's fake timers through the defaults), so nothing ever sleeps for real.
 */
export interface FeedTimers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** `Date.now()`, read on every call (so fake system time applies). */
export const systemFeedClock: FeedClock = { now: () => Date.now() };

/**
 * The global timers, looked up on every call (so Vitest's fake timers apply). Handles are
 * `unref`'d: a feed's schedule alone never keeps a Node process alive.
 */
export const systemFeedTimers: FeedTimers = {
  setInterval(callback, ms) {
    return unref(globalThis.setInterval(callback, ms));
  },
  clearInterval(handle) {
    globalThis.clearInterval(handle as ReturnType<typeof globalThis.setInterval>);
  },
  setTimeout(callback, ms) {
    return unref(globalThis.setTimeout(callback, ms));
  },
  clearTimeout(handle) {
    globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>);
  },
};

function unref<T>(handle: T): T {
  (handle as { unref?: () => void } | null)?.unref?.();
  return handle;
}
