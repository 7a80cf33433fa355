import type { EventStore, LeaseInfo } from "../../log/index.js";

/** A continuity's lease as the store reports it (`undefined`: never leased). */
export type LeaseReading = (LeaseInfo & { live: boolean }) | undefined;

/** One-shot timers; inject them to fire the watch by hand in tests. */
export interface WatchTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of `watchLease`. */
export interface LeaseWatchOptions {
  /**
   * Called once, when the lease is found not live: released by its holder (which ended), lapsed
   * unrenewed (its holder died or hangs), or never taken. The watch has stopped by then.
   */
  onFree(lease: LeaseReading): void;
  /** Milliseconds on the store's lease clock (default `Date.now`, the stores' default one). */
  now?: () => number;
  /** The timers (default the global `setTimeout` and `clearTimeout`). */
  timers?: WatchTimers;
}

/** A watch on a continuity's lease; `stop` ends it (idempotent). */
export interface LeaseWatch {
  stop(): void;
}

/**
 * The least a watch waits between two readings of the lease: a clock that runs behind the
 * store's, which sees the lease still live at what it takes for its expiry, reads again after
 * this, not in a tight loop.
 */
export const MIN_LEASE_WAIT_MS = 50;
/** How long a watch waits to read the lease again after a reading failed. */
export const LEASE_RETRY_MS = 1_000;

const globalTimers: WatchTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Watches the lease of `continuity` until it is free, without polling: it reads the lease, and
 * while it is live sets one timer to its expiry; when that fires it reads again, and a holder that
 * renewed meanwhile moves the timer to the new expiry. So a watch reads the store about once per
 * time to live (at least `MIN_LEASE_WAIT_MS` apart), and learns that a holder died at most that
 * minimum after its lease lapsed. A released lease is seen at the next reading, not at once:
 * nothing signals a release but the lease row.
 *
 * Contract: `onFree` is called at most once, never after `stop`; a failed reading is retried after
 * `LEASE_RETRY_MS`; the watch never throws.
 */
export function watchLease(
  store: EventStore,
  continuity: string,
  options: LeaseWatchOptions,
): LeaseWatch {
  const now = options.now ?? Date.now;
  const timers = options.timers ?? globalTimers;
  let stopped = false;
  let timer: unknown;

  const wait = (ms: number) => {
    if (stopped) return;
    timer = timers.setTimeout(read, Math.max(ms, MIN_LEASE_WAIT_MS));
  };
  function read(): void {
    timer = undefined;
    if (stopped) return;
    store.lease(continuity).then(
      (lease) => {
        if (stopped) return;
        if (lease?.live) return wait(lease.expiresAt - now() + 1);
        stopped = true;
        options.onFree(lease);
      },
      () => wait(LEASE_RETRY_MS),
    );
  }

  read();
  return {
    stop() {
      stopped = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
    },
  };
}
