import { createHash } from "node:crypto";

/** Lowercase hex of sha256 over the parts, joined by NUL. */
function digest(parts: readonly string[]): string {
  return createHash("sha256").update(parts.join("\0")).digest("hex");
}

/**
 * The trace id (32 hex digits) of `key` in `continuity`: the same inputs give the same id, so a
 * trace exported live and again by `spool trace` is one trace in the backend. Never all zeros.
 */
export function traceIdOf(continuity: string, key: string): string {
  const id = digest(["spool.trace", continuity, key]).slice(0, 32);
  return /^0+$/.test(id) ? `${id.slice(0, 31)}1` : id;
}

/** The span id (16 hex digits) of `key` in `continuity`, as `traceIdOf`. Never all zeros. */
export function spanIdOf(continuity: string, key: string): string {
  const id = digest(["spool.span", continuity, key]).slice(0, 16);
  return /^0+$/.test(id) ? `${id.slice(0, 15)}1` : id;
}
