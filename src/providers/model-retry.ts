import { type BackoffPolicy, backoffDelay } from "../actions/index.js";

/**
 * The one retry policy for model calls: how many requests one call may cost and how long to wait
 * between them. The transport applies it to failures before the first byte (a 429, a 5xx, a
 * refused connection), the only point where sending the request again is invisible; the `error`
 * hook's `spool.retry` applies the same policy to a step that failed after its first byte (which
 * the transport never retries). A failure the transport gave up on is no longer retryable, so no
 * other layer multiplies the attempts.
 */
export interface ModelRetryPolicy {
  /** Requests per model call, the first included (default 4). */
  maxAttempts: number;
  /** The backoff between them (default `PROVIDER_BACKOFF`). */
  backoff: BackoffPolicy;
}

/** Provider retry backoff: 1 s, ×2 per attempt, at most 30 s, up to half taken by jitter. */
export const PROVIDER_BACKOFF: BackoffPolicy = {
  baseMs: 1000,
  factor: 2,
  maxMs: 30_000,
  jitter: 0.5,
};

/** The default model retry policy: 4 requests, `PROVIDER_BACKOFF` between them. */
export const MODEL_RETRY: ModelRetryPolicy = { maxAttempts: 4, backoff: PROVIDER_BACKOFF };

/**
 * The wait after failed attempt `attempt` (1-based) of a model call: the policy's backoff
 * (`backoffDelay`, the one formula), or the provider's `retry-after` when that is longer.
 * `random` is the jitter source, [0, 1).
 */
export function modelRetryDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number,
  policy: ModelRetryPolicy = MODEL_RETRY,
): number {
  return Math.max(retryAfterMs ?? 0, backoffDelay(attempt, policy.backoff, random));
}
