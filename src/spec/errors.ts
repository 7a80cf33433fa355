/** Options every Spool error accepts. */
export interface SpoolErrorOptions {
  /** Whether repeating the same call may succeed (a busy database, a dropped connection). */
  retryable?: boolean;
  /** The underlying error, kept for diagnosis; never shown to the model or logged verbatim. */
  cause?: unknown;
  /** How to fix it, in one sentence. Appended to the message. */
  hint?: string;
  /** Structured facts about the failure (field paths, positions, ids). */
  details?: Record<string, unknown>;
}

/**
 * The base of every error Spool raises on purpose.
 *
 * Contract: `code` is stable and dotted (`store.unreachable`, `event.invalid`); `message` says what
 * was wrong and, through `hint`, how to fix it; `retryable` tells a caller whether trying the same
 * call again can help. Messages never contain secrets (passwords in URLs are redacted first).
 */
export class SpoolError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, options: SpoolErrorOptions = {}) {
    super(options.hint ? `${message}. ${options.hint}` : message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.hint = options.hint;
    this.details = options.details ?? {};
  }
}

/** One problem found while validating an event against the catalog. */
export interface EventIssue {
  /** Dotted path into the event, e.g. `data.text` or `stream.kind`. */
  path: string;
  message: string;
}

/** An event failed its catalog schema (or names no catalog type). Nothing was written. */
export class EventValidationError extends SpoolError {
  readonly issues: readonly EventIssue[];

  constructor(type: string, issues: readonly EventIssue[], options: SpoolErrorOptions = {}) {
    const list = issues.map((issue) => `${issue.path || "(event)"}: ${issue.message}`).join("; ");
    super(
      options.details?.unknownType ? "event.unknown-type" : "event.invalid",
      `${type}: ${list}`,
      {
        hint: "Nothing was written; correct the event to match its schema in the event catalog (docs/events.md)",
        ...options,
        details: { type, issues, ...options.details },
      },
    );
    this.issues = issues;
  }
}

/** Codes a store raises; each message carries what to do about it. */
export type StoreErrorCode =
  | "store.unreachable"
  | "store.not-a-database"
  | "store.foreign-database"
  | "store.schema-too-new"
  | "store.closed"
  | "store.busy"
  | "store.io"
  | "store.bad-location"
  | "store.read-only"
  | "store.damaged"
  | "store.lease-lost"
  | "store.seq-moved"
  | "store.bad-lease"
  | "artifact.not-found"
  | "artifact.bad-range"
  | "artifact.bad-hash";

/** A failure of the log's storage: opening, reading, writing, artifacts. */
export class StoreError extends SpoolError {
  declare readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}

/** Bad command-line input or configuration. */
export class ConfigError extends SpoolError {}

/** The `code` of anything thrown (a `SpoolError`'s, a Node error's), or `fallback` when it has none. */
export function errorCodeOf(error: unknown, fallback: string): string {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" && code !== "" ? code : fallback;
}

/** Turns anything thrown into a short, secret-free description. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
