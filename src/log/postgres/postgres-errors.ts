import { StoreError } from "../../spec/index.js";
import { CommitInDoubtError } from "./postgres-pool.js";

const WHERE_TO_LOOK = "check --db (or SPOOL_DB)";

/**
 * The URL with every password removed (the userinfo password and any `password`-like query
 * parameter), safe to print, log and put in error messages. Text that is not a URL loses anything
 * between `user:` and `@`, and the value of any `password=…` pair, instead.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    for (const key of [...parsed.searchParams.keys()]) {
      if (/pass/i.test(key)) parsed.searchParams.delete(key);
    }
    return parsed.toString();
  } catch {
    // Over-redacting is the safe failure here: `.*@` may also take part of an odd host.
    const withoutUserinfo = url.includes("://")
      ? url.replace(/^([a-z][\w+.-]*:\/\/[^:@/]*):.*@/i, "$1@")
      : url.replace(/(^|\s)([^\s:/@]+):[^\s@]*@/g, "$1$2@");
    return withoutUserinfo.replace(/(pass\w*\s*=\s*)[^\s&]+/gi, "$1***");
  }
}

/** The raised error when a backend is used after `close()`. */
export function closedError(location: string): StoreError {
  return new StoreError("store.closed", `the PostgreSQL log at ${location} is closed`, {
    hint: "Open the store again before using it",
  });
}

/** Rejects a location that is not a `postgres://` URL, before any connection is tried. */
export function checkPostgresUrl(url: string): void {
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//i.test(url)) {
    throw new StoreError(
      "store.bad-location",
      `${redactUrl(String(url))} is not a PostgreSQL URL`,
      {
        hint: "Use postgres://user:password@host:5432/database in --db (or SPOOL_DB)",
      },
    );
  }
}

/** Node socket errors that mean the server could not be reached at all. */
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed",
};

/**
 * Maps whatever `pg` or the socket threw to a `StoreError` that names the (redacted) location and
 * says what to do. Connection-level failures are `store.unreachable`: retryable when waiting may
 * help (refused, timeout, reset, server starting or shutting down), not when the URL itself is
 * wrong (bad password, missing database). The server's own text is kept only after scrubbing the
 * password from it, so no secret reaches a message even if a driver were to echo it.
 */
export function postgresError(error: unknown, url: string): StoreError {
  if (error instanceof StoreError) return error;
  const location = redactUrl(url);
  if (error instanceof CommitInDoubtError) {
    return new StoreError("store.io", `PostgreSQL at ${location}: ${error.message}`, {
      cause: error,
      // Not retryable: repeating a write that did commit would store it twice.
      retryable: false,
      hint: "Read the log from the last seq you know of to see whether it was stored",
    });
  }
  const code = errorCode(error);
  const detail = scrub(error instanceof Error ? error.message : String(error), url);
  const unreachable = (reason: string, retryable: boolean, hint: string) =>
    new StoreError("store.unreachable", `cannot reach PostgreSQL at ${location}: ${reason}`, {
      cause: error,
      retryable,
      hint,
      details: { code },
    });
  const network = NETWORK_CODES[code];
  if (network || isConnectionMessage(detail)) {
    return unreachable(
      network ?? detail,
      true,
      `Is the server running and reachable? ${capitalize(WHERE_TO_LOOK)}`,
    );
  }
  switch (code) {
    case "28P01":
    case "28000":
      return unreachable(
        `authentication failed (${detail})`,
        false,
        `Check the user name and password in --db (or SPOOL_DB)`,
      );
    case "3D000":
      return unreachable(
        detail,
        false,
        `Create the database with \`createdb ${databaseName(url)}\`, or ${WHERE_TO_LOOK} and point it at an existing one`,
      );
    case "57P01":
    case "57P02":
    case "57P03":
    case "53300":
      return unreachable(detail, true, "The server is starting, stopping or full; retry shortly");
    case "40001":
    case "40P01":
    case "55P03":
      return new StoreError("store.busy", `PostgreSQL at ${location} is busy: ${detail}`, {
        cause: error,
        retryable: true,
        hint: "Retry the call",
        details: { code },
      });
    case "42501":
      return new StoreError(
        "store.bad-location",
        `PostgreSQL at ${location} refused access: ${detail}`,
        {
          cause: error,
          hint: "Grant this user CREATE and USAGE on the schema, or point --db at a database it owns",
          details: { code },
        },
      );
    case "53100":
      return new StoreError("store.io", `the disk of PostgreSQL at ${location} is full`, {
        cause: error,
        retryable: true,
        hint: "Free space on the server; nothing acknowledged has been lost",
        details: { code },
      });
    default:
      return new StoreError("store.io", `PostgreSQL at ${location}: ${detail}`, {
        cause: error,
        // Class 08 is "connection exception" and 25P03 an idle transaction the server ended: both
        // rolled back, so the call may be retried on a new connection.
        retryable: code.startsWith("08") || code === "25P03",
        details: { code },
      });
  }
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : "";
}

/** Failures `pg` reports without a code: timeouts and sockets that closed under it. */
function isConnectionMessage(message: string): boolean {
  return /connection terminated|connection timeout|timeout expired|timeout exceeded when trying to connect|connection ended|Client has encountered a connection error/i.test(
    message,
  );
}

function scrub(text: string, url: string): string {
  let password = "";
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // Not a URL: there is no userinfo password to scrub.
  }
  return password ? text.split(password).join("***") : text;
}

function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || "<name>";
  } catch {
    return "<name>";
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
