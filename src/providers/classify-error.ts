import { ProviderError, type ProviderErrorCode, type ProviderErrorInfo } from "./provider-error.js";
import { redactKeys } from "./redact-keys.js";
import { displayURL } from "./settings/index.js";

/** What `classifyProviderError` may use besides the error itself. */
export interface ClassifyContext {
  /** The provider's name, for messages (`anthropic`, `ollama`, …). */
  provider: string;
  /** Keys to scrub from every message. */
  secrets?: readonly string[];
  /** The call's signal: an abort is `provider.cancelled` whatever the error says. */
  signal?: AbortSignal;
  /** Where the request went: a connection failure names it (with any password hidden). */
  baseURL?: string;
  /** A URL that answers a plain GET when the server is up (`…/v1/models`), for the user to try. */
  checkURL?: string;
}

/**
 * Turns anything a provider SDK, `fetch` or a stream can throw into a `ProviderErrorInfo`:
 * a code, a message that says what to do, `retryable`, the status, the provider's error type, its
 * request id and any `retry-after`. Never throws; never lets a key through.
 */
export function classifyProviderError(error: unknown, context: ClassifyContext): ProviderErrorInfo {
  if (error instanceof ProviderError) return scrub(error.info, context);
  if (context.signal?.aborted || isAbort(error)) {
    return {
      code: "provider.cancelled",
      message: `${context.provider}: the call was cancelled`,
      retryable: false,
    };
  }
  const record = asRecord(error);
  const status = typeof record.status === "number" ? record.status : undefined;
  const body = asRecord(record.error);
  // Anthropic: { type: "error", error: { type, message } }; OpenAI: { type | code, message }.
  const inner = asRecord(body.error ?? body);
  const providerType = firstString(inner.type, inner.code, body.type);
  const providerMessage = firstString(inner.message, body.message);
  const headers = record.headers;
  const info: ProviderErrorInfo = {
    code: "provider.unknown",
    message: "",
    retryable: false,
  };
  if (status !== undefined) info.status = status;
  if (providerType) info.providerType = providerType;
  const requestId =
    header(headers, "request-id") ??
    header(headers, "x-request-id") ??
    firstString(record.requestID);
  if (requestId) info.requestId = requestId;
  const retryAfterMs = retryAfter(headers);
  if (retryAfterMs !== undefined) info.retryAfterMs = retryAfterMs;

  const text = providerMessage ?? (error instanceof Error ? error.message : String(error));
  const [code, advice] = codeFor(status, providerType, text, error);
  info.code = code;
  info.retryable = isRetryableCode(code);
  const where = status !== undefined ? `${context.provider} answered ${status}` : context.provider;
  info.message =
    code === "provider.connection" && context.baseURL
      ? connectionMessage(error, context.provider, context.baseURL, context.checkURL)
      : `${where}: ${withAdvice(oneLine(text), advice)}`;
  return scrub(info, context);
}

/** What a failure to reach a server was, from the system code along the error's cause chain. */
const CONNECT_FAILURES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  UND_ERR_SOCKET: "the connection was closed",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved now",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  EPROTO: "a TLS error (is it http, not https?)",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
};

/**
 * The one message of a connection failure, whichever provider: the base URL, what happened, and
 * how to check the server (`ollama: could not connect to http://127.0.0.1:11434/v1 (connection
 * refused): is the server running? Check with \`curl http://127.0.0.1:11434/v1/models\``).
 */
export function connectionMessage(
  error: unknown,
  provider: string,
  baseURL: string,
  checkURL?: string,
): string {
  const url = displayURL(baseURL);
  const check = checkURL ? ` Check with \`curl ${displayURL(checkURL)}\`` : "";
  const reason = connectFailure(error);
  const what = reason ? ` (${reason})` : "";
  const refused = reason === "connection refused" || reason === undefined;
  const question = refused
    ? "is the server running, and is that its address and port?"
    : "is the address right and the server reachable from here?";
  return `${provider}: could not connect to ${url}${what}: ${question}${check}`;
}

/** The first known system failure along the cause chain, or fetch's own words for a bad port. */
function connectFailure(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === "object"; depth++) {
    const record = asRecord(current);
    if (typeof record.code === "string" && Object.hasOwn(CONNECT_FAILURES, record.code)) {
      return CONNECT_FAILURES[record.code];
    }
    if (record.message === "bad port") return "fetch refuses to use that port";
    const inner = Array.isArray(record.errors) ? record.errors[0] : undefined;
    current = record.cause ?? inner;
  }
  return undefined;
}

const RETRYABLE = new Set<ProviderErrorCode>([
  "provider.rate-limited",
  "provider.overloaded",
  "provider.server-error",
  "provider.connection",
  "provider.idle-timeout",
]);

/** Whether failures with this code may succeed when the same request is sent again. */
export function isRetryableCode(code: ProviderErrorCode): boolean {
  return RETRYABLE.has(code);
}

function codeFor(
  status: number | undefined,
  type: string | undefined,
  text: string,
  error: unknown,
): [ProviderErrorCode, string] {
  if (type === "overloaded_error" || status === 529) {
    return ["provider.overloaded", "The provider is overloaded; Spool retries with backoff"];
  }
  if (status === 429 || type === "rate_limit_error" || type === "rate_limit_exceeded") {
    return ["provider.rate-limited", "Rate limited; Spool waits as the provider asks and retries"];
  }
  if (isContextTooLong(type, text)) {
    return ["provider.context-too-long", CONTEXT_TOO_LONG_ADVICE];
  }
  if (isCursorExpired(type, text)) {
    return [
      "provider.cursor-expired",
      "The provider no longer knows this previous_response_id; rebuild the context from the log",
    ];
  }
  if (
    status === 401 ||
    status === 403 ||
    type === "authentication_error" ||
    type === "permission_error"
  ) {
    return [
      "provider.auth",
      "Check the API key (option, environment or config) and its permissions",
    ];
  }
  if (status !== undefined && status >= 500) {
    return ["provider.server-error", "A server error; Spool retries with backoff"];
  }
  if (status !== undefined && status >= 400) {
    return ["provider.bad-request", "The request was refused; fix it before sending it again"];
  }
  if (type === "api_error" || type === "server_error") {
    return ["provider.server-error", "A server error; Spool retries with backoff"];
  }
  if (error instanceof SyntaxError) {
    return [
      "provider.bad-stream",
      "The response was not the provider's stream format; check the base URL and format",
    ];
  }
  if (isConnectionError(error, text)) {
    return [
      "provider.connection",
      "Check the network and the base URL; Spool retries before the first byte",
    ];
  }
  return ["provider.unknown", ""];
}

/** What a context-too-long failure tells the user (the runtime hands the thread off). */
export const CONTEXT_TOO_LONG_ADVICE =
  "The request does not fit the model's context window: Spool hands the thread off to a shorter continuation. If the window Spool assumed is wrong, set it (model_info in .ai/config.yaml, or SPOOL_CONTEXT_WINDOW)";

/**
 * Whether a provider's error says the request is longer than the model's context window, by its
 * type or code (OpenAI and Groq `context_length_exceeded`, llama.cpp `exceed_context_size_error`)
 * or its message: Anthropic "prompt is too long: … tokens > … maximum" and "input length and
 * `max_tokens` exceed context limit", vLLM and OpenAI "This model's maximum context length is …",
 * llama.cpp "the request exceeds the available context size", Ollama "… exceeds the context
 * length", Mistral "… too large for model with … maximum context length", Gemini "The input token
 * count (…) exceeds the maximum number of tokens allowed".
 */
export function isContextTooLong(type: string | undefined, text: string): boolean {
  if (type === "context_length_exceeded" || type === "exceed_context_size_error") return true;
  return CONTEXT_TOO_LONG_TEXT.some((pattern) => pattern.test(text));
}

const CONTEXT_TOO_LONG_TEXT: readonly RegExp[] = [
  /prompt is too long/i,
  /maximum context length/i,
  /context[ _]length[ _]exceeded/i,
  /exceeds? (?:the )?(?:available |model'?s? )?context (?:size|length|window|limit)/i,
  /input length and `?max_tokens`? exceed context limit/i,
  /input token count .* exceeds the maximum number of tokens/i,
];

function isCursorExpired(type: string | undefined, text: string): boolean {
  if (type === "previous_response_not_found") return true;
  return (
    /previous[_ ]response/i.test(text) && /not found|expired|does not exist|unknown/i.test(text)
  );
}

/**
 * A failure to reach the server or keep the connection: by the error's name or class (the SDKs'
 * `APIConnectionError`, whose `name` is plain `Error` in the `openai` SDK), a system error code
 * or a network message anywhere along its `cause` chain (`fetch failed` → `ECONNREFUSED`).
 */
function isConnectionError(error: unknown, text: string): boolean {
  const NETWORK_TEXT =
    /fetch failed|terminated|socket|ECONNRESET|ECONNREFUSED|other side closed|premature close|^connection error/i;
  if (NETWORK_TEXT.test(text)) return true;
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth++) {
    const names = [(current as Error).name, current.constructor?.name].filter(
      (name): name is string => typeof name === "string",
    );
    if (names.some((name) => /Connection|Timeout/.test(name))) return true;
    const record = asRecord(current);
    const code = record.code;
    if (typeof code === "string" && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return true;
    if (typeof record.message === "string" && NETWORK_TEXT.test(record.message)) return true;
    const inner = Array.isArray(record.errors) ? record.errors[0] : undefined;
    current = record.cause ?? inner;
  }
  return false;
}

function isAbort(error: unknown): boolean {
  const name = error instanceof Error ? error.name : "";
  return name === "AbortError" || name === "APIUserAbortError";
}

/** Milliseconds from `retry-after-ms`, `retry-after` (seconds or an HTTP date), capped at 10 min. */
export function retryAfter(headers: unknown, now = Date.now()): number | undefined {
  const ms = Number(header(headers, "retry-after-ms"));
  if (header(headers, "retry-after-ms") !== undefined && Number.isFinite(ms) && ms >= 0) {
    return Math.min(ms, 600_000);
  }
  const value = header(headers, "retry-after");
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 600_000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - now), 600_000);
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === "function")
    return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

function scrub(info: ProviderErrorInfo, context: ClassifyContext): ProviderErrorInfo {
  return { ...info, message: redactKeys(info.message, context.secrets) };
}

/** `text`, then `advice` as a sentence of its own (no doubled full stop). */
function withAdvice(text: string, advice: string | undefined): string {
  if (!advice) return text;
  return `${text}${/[.!?]$/.test(text) ? "" : "."} ${advice}`;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 2000 ? `${line.slice(0, 2000)}…` : line || "no message";
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === "string" && value.length > 0) return value;
  return undefined;
}
