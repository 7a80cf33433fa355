/** Options of `TokenBuckets`. */
export interface RateLimitOptions {
  /** Requests a token may make in a burst (default 60). */
  burst?: number;
  /** Requests per second it regains (default 10). */
  perSecond?: number;
  /** Milliseconds now (injected in tests). */
  now?: () => number;
}

/** What `take` answers: allowed, or refused with the whole seconds until a request is allowed. */
export type RateDecision = { ok: true } | { ok: false; retryAfter: number };

/**
 * A token bucket per key (per access token): `burst` requests at once, refilled at `perSecond`.
 * Pure arithmetic over the injected clock: no timers. Keys idle long enough to be full again are
 * dropped when the map grows, so memory follows the active keys.
 */
export class TokenBuckets {
  readonly #burst: number;
  readonly #perSecond: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, { level: number; at: number }>();

  constructor(options: RateLimitOptions = {}) {
    this.#burst = options.burst ?? 60;
    this.#perSecond = options.perSecond ?? 10;
    this.#now = options.now ?? Date.now;
  }

  /** Takes one request's worth from `key`'s bucket, or says how long to wait. */
  take(key: string): RateDecision {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { level: this.#burst, at: now };
    const level = Math.min(
      this.#burst,
      bucket.level + ((now - bucket.at) / 1000) * this.#perSecond,
    );
    if (level < 1) {
      this.#buckets.set(key, { level, at: now });
      return { ok: false, retryAfter: Math.max(1, Math.ceil((1 - level) / this.#perSecond)) };
    }
    this.#buckets.set(key, { level: level - 1, at: now });
    if (this.#buckets.size > 10_000) this.#prune(now);
    return { ok: true };
  }

  #prune(now: number): void {
    const full = (this.#burst / this.#perSecond) * 1000;
    for (const [key, bucket] of this.#buckets) {
      if (now - bucket.at >= full) this.#buckets.delete(key);
    }
  }
}
