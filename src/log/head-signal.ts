/**
 * The highest seq known to be committed, and a way to wait for it to pass a point.
 *
 * Waiting is by number, not by event: `wait(after)` resolves at once when the known head is
 * already past `after`, so a commit that lands between a reader's query and its wait is never
 * lost (the reader compares numbers instead of hoping to catch a notification).
 */
export class HeadSignal {
  #known = 0;
  #waiters = new Set<{ after: number; wake: () => void }>();

  /** The highest seq reported so far. */
  get known(): number {
    return this.#known;
  }

  /** Reports that `seq` is committed; wakes every waiter it passes. */
  advance(seq: number): void {
    if (seq <= this.#known) return;
    this.#known = seq;
    for (const waiter of this.#waiters) {
      if (seq > waiter.after) {
        this.#waiters.delete(waiter);
        waiter.wake();
      }
    }
  }

  /**
   * Resolves `true` once the head passes `after`, or `false` when `signal` aborts or `release()`
   * ends all waits.
   */
  wait(after: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#known > after) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.#waiters.delete(waiter);
        resolve(false);
      };
      const waiter = {
        after,
        wake: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.#known > after);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Ends every pending wait with `false` (the store is closing). */
  release(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const waiter of waiters) waiter.wake();
  }
}
