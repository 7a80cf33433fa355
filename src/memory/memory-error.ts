import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Codes the memory index raises; each message carries what to do about it. */
export type MemoryErrorCode =
  | "memory.bad-query"
  | "memory.bad-option"
  | "memory.embedding-failed"
  | "memory.embedding-config"
  | "memory.schema-too-new"
  | "memory.storage"
  | "memory.closed"
  | "memory.unavailable";

/** How to repair an index that cannot be opened or read: it is derived from the log. */
export const REINDEX_HINT =
  "Rebuild it from the log with `spool memory reindex` (it replaces a damaged index file); until then sessions run without memory";

/**
 * `error` as a `MemoryError`: itself when it is one, else `memory.storage` (the backend failed:
 * a damaged SQLite file, a missing PostgreSQL table) saying what was being done, with the cause
 * kept and `REINDEX_HINT`.
 */
export function storageError(error: unknown, doing: string): MemoryError {
  if (error instanceof MemoryError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new MemoryError("memory.storage", `the memory index failed while ${doing}: ${reason}`, {
    cause: error,
    hint: REINDEX_HINT,
  });
}

/** A failure of the memory index: opening it, indexing, searching, embedding. */
export class MemoryError extends SpoolError {
  declare readonly code: MemoryErrorCode;

  constructor(code: MemoryErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}
