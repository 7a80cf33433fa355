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
  /**
   * The seq after which the watch follows the continuity's closes: one read before the caller
   * found the lease live, so that a close logged after that reading cannot be missed (default:
   * the head of the log when the watch begins).
   */
  after?: number;
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
 * minimum after its lease lapsed.
 *
 * A holder that ends normally logs `runtime.closed` before it releases its lease (after letting
 * its background work finish), and the watch follows the continuity for that event: on one it
 * reads the lease at once, and while the same grant is still live, again after
 * `MIN_LEASE_WAIT_MS`, doubling each time (never past the expiry), so a release is seen soon
 * after it is made, not at the lease's expiry. Closes are followed from `options.after`: a close
 * logged before it is not seen (its release is then found at the expiry reading), so a caller
 * reads the head before it reads the lease it watches.
 *
 * Contract: `onFree` is called at most once, never after `stop`; a failed reading is retried after
 * `LEASE_RETRY_MS`; a store that cannot be followed leaves the expiry timer alone to find a
 * release; the watch never throws.
 */
export function watchLease(
  store: EventStore,
  continuity: string,
  options: LeaseWatchOptions,
): LeaseWatch {
  const now = options.now ?? Date.now;
  const timers = options.timers ?? globalTimers;
  const follow = new AbortController();
  let stopped = false;
  let timer: unknown;
  /** A holder closed: the grant it held (once read) and the next wait while it is still live. */
  let closing: { token?: number; waitMs: number } | undefined;

  const wait = (ms: number) => {
    if (stopped) return;
    timer = timers.setTimeout(read, Math.max(ms, MIN_LEASE_WAIT_MS));
  };
  const untilExpiry = (lease: NonNullable<LeaseReading>) => {
    const expiry = lease.expiresAt - now() + 1;
    if (closing && (closing.token ?? lease.token) === lease.token) {
      closing.token = lease.token;
      const ms = Math.min(closing.waitMs, expiry);
      closing.waitMs *= 2;
      return ms;
    }
    // Another grant than the closing holder's: its expiry is what counts again.
    closing = undefined;
    return expiry;
  };
  /** A reading in flight, and whether another was asked for meanwhile (a close came). */
  let reading = false;
  let again = false;
  function read(): void {
    timer = undefined;
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    /** Waits `ms` to read again, or reads now when a close asked for it meanwhile. */
    const next = (ms: () => number) => {
      reading = false;
      if (stopped) return;
      if (!again) return wait(ms());
      again = false;
      read();
    };
    store.lease(continuity).then(
      (lease) => {
        if (lease?.live) return next(() => untilExpiry(lease));
        reading = false;
        if (stopped) return;
        stop();
        options.onFree(lease);
      },
      () => next(() => LEASE_RETRY_MS),
    );
  }
  function stop(): void {
    stopped = true;
    follow.abort();
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
  }
  /** A close was logged: read now, then soon, until its release shows. */
  const closed = () => {
    if (stopped) return;
    closing = { waitMs: MIN_LEASE_WAIT_MS };
    if (timer !== undefined) timers.clearTimeout(timer);
    read();
  };

  read();
  void followCloses(store, continuity, options.after, follow.signal, closed);
  return { stop };
}

/**
 * Calls `closed` for every `runtime.closed` of `continuity` logged after `from` (default: from
 * now on), until `signal`.
 */
async function followCloses(
  store: EventStore,
  continuity: string,
  from: number | undefined,
  signal: AbortSignal,
  closed: () => void,
): Promise<void> {
  try {
    const after = from ?? (await store.head());
    if (signal.aborted) return;
    for await (const message of store.subscribe({
      continuity,
      types: ["runtime.closed"],
      after,
      signal,
    })) {
      if (message.type === "event") closed();
    }
  } catch {
    // Not followed (the store failed or closed): the expiry timer still finds the release.
  }
}
