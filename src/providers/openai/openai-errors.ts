import { APIConnectionError, APIError, APIUserAbortError } from "openai";
import {
  CONTEXT_TOO_LONG_ADVICE,
  classifyProviderError,
  isContextTooLong,
} from "../classify-error.js";
import type { ProviderErrorCode, ProviderErrorInfo } from "../provider-error.js";
import { redactKeys } from "../redact-keys.js";

/** What an OpenAI error code means to Spool, and what to tell the user. */
interface CodeMeaning {
  code: ProviderErrorCode;
  retryable: boolean;
  advice: string;
}

const MEANINGS: Record<string, CodeMeaning> = {
  previous_response_not_found: {
    code: "provider.cursor-expired",
    retryable: false,
    advice:
      "The provider no longer knows this previous_response_id; rebuild the context from the log",
  },
  server_error: {
    code: "provider.server-error",
    retryable: true,
    advice: "A server error; Spool retries with backoff",
  },
  rate_limit_exceeded: {
    code: "provider.rate-limited",
    retryable: true,
    advice: "Rate limited; Spool waits as the provider asks and retries",
  },
  insufficient_quota: {
    code: "provider.auth",
    retryable: false,
    advice: "The key's account has no quota left; check its plan and billing, or use another key",
  },
};

/**
 * The meaning of an OpenAI error code (`previous_response_not_found`, `server_error`,
 * `rate_limit_exceeded`, `insufficient_quota`), or undefined for codes the shared classification
 * reads well enough. A 400/404 about `previous_response_id` that says "not found" is a cursor
 * expiry whatever its code.
 */
function meaningOf(
  code: string | undefined,
  param: string | undefined,
  message: string,
): CodeMeaning | undefined {
  if (code !== undefined && Object.hasOwn(MEANINGS, code)) return MEANINGS[code];
  if (isContextTooLong(code, message)) {
    return { code: "provider.context-too-long", retryable: false, advice: CONTEXT_TOO_LONG_ADVICE };
  }
  if (param === "previous_response_id" && /not found|expired|does not exist/i.test(message)) {
    return MEANINGS.previous_response_not_found;
  }
  return undefined;
}

/**
 * A failure the Responses stream reported in-band (`response.failed`, an `error` event the SDK let
 * through) as ProviderErrorInfo. Codes without a meaning of their own are `provider.unknown`,
 * except `invalid_*` codes (`provider.bad-request`).
 */
export function streamFailureInfo(
  provider: string,
  code: string | undefined,
  message: string | undefined,
  secrets: readonly string[] = [],
): ProviderErrorInfo {
  const text = oneLine(message || "the response failed");
  const meaning = meaningOf(code, undefined, text) ?? {
    code: code?.startsWith("invalid") ? "provider.bad-request" : "provider.unknown",
    retryable: false,
    advice: code?.startsWith("invalid")
      ? "The request was refused; fix it before sending it again"
      : "",
  };
  const info: ProviderErrorInfo = {
    code: meaning.code,
    message: redactKeys(
      `${provider}: ${text}${meaning.advice ? `. ${meaning.advice}` : ""}`,
      secrets,
    ),
    retryable: meaning.retryable,
  };
  if (code) info.providerType = code;
  return info;
}

/**
 * The `classify` of the OpenAI adapters: reads the SDK's `APIError` (HTTP errors before the stream,
 * and `error` events the SDK throws mid-stream) for the codes above. Returns undefined for
 * everything else (aborts, connection errors, other codes), which the shared classification
 * handles.
 */
export function classifyOpenAIError(
  error: unknown,
  provider: string,
  secrets: readonly string[] = [],
): ProviderErrorInfo | undefined {
  if (
    !(error instanceof APIError) ||
    error instanceof APIUserAbortError ||
    error instanceof APIConnectionError
  ) {
    return undefined;
  }
  const body = asRecord(error.error);
  const code = firstString(error.code, body.code, error.type, body.type);
  const text = oneLine(firstString(body.message) ?? error.message);
  const meaning = meaningOf(code, firstString(error.param, body.param), text);
  if (!meaning) return undefined;
  const where = error.status !== undefined ? `${provider} answered ${error.status}` : provider;
  const info: ProviderErrorInfo = {
    ...classifyProviderError(error, { provider, secrets }),
    code: meaning.code,
    message: redactKeys(`${where}: ${text}. ${meaning.advice}`, secrets),
    retryable: meaning.retryable,
  };
  if (code) info.providerType = code;
  return info;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 2000 ? `${line.slice(0, 2000)}…` : line;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === "string" && value.length > 0) return value;
  return undefined;
}
