import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/**
 * The stable codes of provider failures.
 * - `provider.rate-limited` (429), `provider.overloaded` (529, Anthropic `overloaded_error`),
 *   `provider.server-error` (5xx), `provider.connection` (refused, reset, DNS, cut mid-stream),
 *   `provider.idle-timeout` (no byte for too long): retryable.
 * - `provider.auth` (401/403), `provider.bad-request` (400/404/413/422: fix the request),
 *   `provider.cursor-expired` (the provider no longer knows a `previous_response_id`),
 *   `provider.context-too-long` (the request does not fit the model's context window: the
 *   runtime hands the thread off to a continuation instead of failing the turn),
 *   `provider.bad-stream` (bytes that are not the provider's protocol), `provider.no-key`
 *   (no API key anywhere), `provider.cancelled` (the caller aborted): not retryable.
 */
export const PROVIDER_ERROR_CODES = [
  "provider.rate-limited",
  "provider.overloaded",
  "provider.server-error",
  "provider.connection",
  "provider.idle-timeout",
  "provider.auth",
  "provider.bad-request",
  "provider.cursor-expired",
  "provider.context-too-long",
  "provider.bad-stream",
  "provider.no-key",
  "provider.cancelled",
  "provider.unknown",
] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

/** A provider failure as plain data: what a stream's `error` part and the log carry. */
export interface ProviderErrorInfo {
  code: ProviderErrorCode;
  /** What went wrong and how to fix it; never contains an API key. */
  message: string;
  /**
   * Whether the same request may succeed if sent again, and may still be: false once the
   * transport has spent the model retry policy's attempts on it (its message says so).
   */
  retryable: boolean;
  /** The HTTP status, when there was a response. */
  status?: number;
  /** The provider's own error type (`overloaded_error`, `rate_limit_exceeded`, …). */
  providerType?: string;
  /** How long the provider asked us to wait (`retry-after`, `retry-after-ms`), in ms. */
  retryAfterMs?: number;
  /** The provider's request id, for support tickets. */
  requestId?: string;
}

/** A provider failure thrown where throwing is right (before a stream starts, in configuration). */
export class ProviderError extends SpoolError {
  readonly info: ProviderErrorInfo;

  constructor(info: ProviderErrorInfo, options: SpoolErrorOptions = {}) {
    super(info.code, info.message, {
      ...options,
      retryable: info.retryable,
      details: { ...info, ...options.details },
    });
    this.info = info;
  }
}
