import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ContextNotFoundError } from "../app/index.js";
import { ActorAccessError, ContinuityLiveError, SourceChangeError } from "../runtime/index.js";
import { ConfigError, EventValidationError, SpoolError, StoreError } from "../spec/index.js";

/**
 * An error the HTTP API answers with on purpose: `status` is the HTTP status, `code` the stable
 * dotted code the JSON body carries (`auth.missing-token`, `request.invalid`, …), and the message
 * says what was wrong and how to fix it. Never carries a secret.
 */
export class ServerError extends SpoolError {
  readonly status: ContentfulStatusCode;
  /** Seconds to wait before trying again (429), sent as `Retry-After`. */
  readonly retryAfter: number | undefined;

  constructor(
    status: ContentfulStatusCode,
    code: string,
    message: string,
    options: { hint?: string; retryAfter?: number; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, {
      ...(options.hint !== undefined ? { hint: options.hint } : {}),
      ...(options.details !== undefined ? { details: options.details } : {}),
    });
    this.status = status;
    this.retryAfter = options.retryAfter;
  }
}

/** The JSON body of every error answer: `{ error: { code, message } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** The status and body for `error`: a Spool error by its family, anything else a bare 500. */
export function errorAnswer(error: unknown): { status: ContentfulStatusCode; body: ErrorBody } {
  if (error instanceof ServerError) {
    return { status: error.status, body: bodyOf(error, error.details) };
  }
  if (error instanceof ActorAccessError) return { status: 403, body: bodyOf(error) };
  if (error instanceof EventValidationError) {
    return {
      status: 400,
      body: { error: { code: "request.invalid", message: error.message } },
    };
  }
  if (error instanceof ContextNotFoundError) return { status: 404, body: bodyOf(error) };
  if (error instanceof SourceChangeError) {
    return { status: SOURCE_CHANGE_STATUS[error.code], body: bodyOf(error, error.details) };
  }
  if (error instanceof ContinuityLiveError) return { status: 409, body: bodyOf(error) };
  if (error instanceof ConfigError) return { status: 503, body: bodyOf(error) };
  if (error instanceof StoreError) {
    return { status: error.code === "store.lease-lost" ? 409 : 503, body: bodyOf(error) };
  }
  if (error instanceof SpoolError) return { status: 422, body: bodyOf(error) };
  return {
    status: 500,
    body: {
      error: {
        code: "server.internal",
        message: "the server failed on this request; its log has the cause",
      },
    },
  };
}

/** The status of each refused source change. */
const SOURCE_CHANGE_STATUS = {
  "source.unknown": 404,
  "source.exists": 409,
  "source.bad-definition": 400,
  "source.denied": 403,
} as const satisfies Record<SourceChangeError["code"], ContentfulStatusCode>;

/** Answers `error` on `c` as JSON (with `Retry-After` for a 429). */
export function errorResponse(c: Context, error: unknown): Response {
  const { status, body } = errorAnswer(error);
  if (error instanceof ServerError && error.retryAfter !== undefined) {
    c.header("Retry-After", String(error.retryAfter));
  }
  if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="spool"');
  return c.json(body, status);
}

function bodyOf(error: SpoolError, details?: Record<string, unknown>): ErrorBody {
  const shown = details && Object.keys(details).length > 0 ? { details } : {};
  return { error: { code: error.code, message: error.message, ...shown } };
}

/** 404 for a continuity the token may not see or that does not exist: the two look the same. */
export function continuityNotFound(continuity: string): ServerError {
  return new ServerError(
    404,
    "continuity.not-found",
    `no continuity ${JSON.stringify(continuity)} that this token may see`,
    { hint: "GET /api/continuities lists the ones it may" },
  );
}
