import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Every code a built-in tool fails with; each message says how to fix the call. */
export type ToolErrorCode =
  | "tool.path-outside-workspace"
  | "tool.bad-path"
  | "tool.path-reserved"
  | "tool.workspace-unavailable"
  | "tool.not-found"
  | "tool.permission-denied"
  | "tool.is-directory"
  | "tool.not-directory"
  | "tool.already-exists"
  | "tool.binary-file"
  | "tool.too-large"
  | "tool.bad-pattern"
  | "tool.io"
  | "tool.bad-url"
  | "tool.bad-request"
  | "tool.host-not-allowed"
  | "tool.too-many-redirects"
  | "tool.http-failed"
  | "tool.shell-disabled"
  | "tool.spawn-failed"
  | "tool.bad-timezone"
  | "tool.aborted";

/**
 * A built-in tool refused or failed a call.
 *
 * Contract: `code` is one of `ToolErrorCode` and stable; the message names the path, host or
 * setting involved and says what to change; it never holds an absolute host path outside the
 * workspace. `retryable` is true only where the same call may succeed later (a busy file, a
 * dropped connection, an aborted attempt).
 */
export class ToolError extends SpoolError {
  declare readonly code: ToolErrorCode;

  constructor(code: ToolErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}

const TRANSIENT_IO = new Set(["EBUSY", "EMFILE", "ENFILE", "EAGAIN", "EINTR", "ETIMEDOUT"]);

/** The `code` of a Node system error (`ENOENT`, …), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/**
 * A Node file-system error on `relative` (a workspace-relative path) as a `ToolError`. Never
 * throws; a `ToolError` passes through unchanged, and the Node error is kept only as `cause`.
 */
export function toFsToolError(error: unknown, relative: string): ToolError {
  if (error instanceof ToolError) return error;
  const shown = `\`${relative}\``;
  const options = { cause: error, details: { path: relative } };
  switch (errnoCode(error)) {
    case "ENOENT":
      return new ToolError("tool.not-found", `${shown} does not exist`, {
        ...options,
        hint: "Check the path with fs.list; paths are relative to the workspace root",
      });
    case "EACCES":
    case "EPERM":
      return new ToolError("tool.permission-denied", `${shown} is not accessible`, {
        ...options,
        hint: "The runtime's user lacks permission for it; use another path",
      });
    case "EISDIR":
      return new ToolError("tool.is-directory", `${shown} is a directory`, {
        ...options,
        hint: "Give the path of a file; use fs.list to see what the directory holds",
      });
    case "ENOTDIR":
      return new ToolError("tool.not-directory", `a part of ${shown} is not a directory`, {
        ...options,
        hint: "Check each folder in the path with fs.list",
      });
    case "EEXIST":
      return new ToolError("tool.already-exists", `${shown} already exists`, {
        ...options,
        hint: 'Use mode "overwrite" to replace it or "append" to add to it',
      });
    case "ELOOP":
      return new ToolError("tool.bad-path", `${shown} goes through a loop of symbolic links`, {
        ...options,
        hint: "Use a path that does not go through the looping link",
      });
    case "ENAMETOOLONG":
      return new ToolError("tool.bad-path", `${shown} is too long`, {
        ...options,
        hint: "Use a shorter path",
      });
    default: {
      const code = errnoCode(error) ?? "unknown";
      return new ToolError("tool.io", `${shown} could not be accessed (${code})`, {
        ...options,
        retryable: TRANSIENT_IO.has(code),
        hint: "Try again later or use another path",
      });
    }
  }
}

/** The error for an attempt whose `signal` was aborted (a timeout or a cancellation). */
export function abortedError(what: string, cause?: unknown): ToolError {
  return new ToolError(
    "tool.aborted",
    `${what} was stopped: the action timed out or was cancelled`,
    {
      retryable: true,
      cause,
      hint: "Run it again, with a narrower request or a longer timeout",
    },
  );
}
