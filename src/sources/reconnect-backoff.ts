import { backoffDelay } from "../actions/index.js";

/**
 * The delays between a network source's attempts after consecutive failures: `baseMs` after the
 * first, doubling after each further one, at most `maxMs` (never below `baseMs`). Without jitter,
 * so the `retryInMs` a notice announces is the wait that follows. `reset()` after a success.
 * Built on the scheduler's one backoff policy (`backoffDelay`).
 */
export class ReconnectBackoff {
  #failures = 0;
  readonly #baseMs: number;
  readonly #maxMs: number;

  constructor(baseMs: number, maxMs: number) {
    this.#baseMs = baseMs;
    this.#maxMs = Math.max(baseMs, maxMs);
  }

  /** Counts one more failure and returns the wait before the next attempt. */
  next(): number {
    this.#failures += 1;
    return backoffDelay(
      this.#failures,
      { baseMs: this.#baseMs, factor: 2, maxMs: this.#maxMs, jitter: 0 },
      () => 0,
    );
  }

  /** Forgets the failures: the next failure waits `baseMs` again. */
  reset(): void {
    this.#failures = 0;
  }
}
