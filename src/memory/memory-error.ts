import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Codes the memory index raises; each message carries what to do about it. */
export type MemoryErrorCode =
  | "memory.bad-query"
  | "memory.bad-option"
  | "memory.embedding-failed"
  | "memory.embedding-config"
  | "memory.schema-too-new"
  | "memory.storage"
  | "memory.closed";

/** A failure of the memory index: opening it, indexing, searching, embedding. */
export class MemoryError extends SpoolError {
  declare readonly code: MemoryErrorCode;

  constructor(code: MemoryErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}
