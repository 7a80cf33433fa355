/**
 * How long to wait before retry attempt `n + 1` after attempt `n` failed: exponential from
 * `baseMs`, multiplied by `factor` per attempt, capped at `maxMs`, then shortened by up to
 * `jitter` (a fraction) using the injected random source, so retries of many actions spread out.
 */
export interface BackoffPolicy {
  /** Delay after the first failed attempt, before jitter (default 250 ms). */
  baseMs: number;
  /** Growth per further attempt (default 2). */
  factor: number;
  /** Upper bound before jitter (default 10 s). */
  maxMs: number;
  /** Fraction of the delay that jitter may remove, 0…1 (default 0.5: delays fall in [d/2, d]). */
  jitter: number;
}

/** The default policy: 250 ms, ×2 per attempt, at most 10 s, up to half of it taken by jitter. */
export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseMs: 250,
  factor: 2,
  maxMs: 10_000,
  jitter: 0.5,
};

/**
 * The delay (whole milliseconds) after failed attempt `attempt` (1-based).
 * `random` returns a number in [0, 1); with `() => 0` the delay is the un-jittered exponential one.
 * Never negative, never above `maxMs`.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const exponent = Math.max(0, attempt - 1);
  const raw = Math.min(policy.maxMs, policy.baseMs * policy.factor ** exponent);
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  const r = Math.min(1, Math.max(0, random()));
  return Math.max(0, Math.round(raw * (1 - jitter * r)));
}
