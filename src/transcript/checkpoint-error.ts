import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Codes `CheckpointError` carries. */
export type CheckpointErrorCode = "checkpoint.no-continuity";

/**
 * A checkpoint could not be written. Verification never throws this: what it finds wrong is
 * reported as a `CheckpointProblem`.
 */
export class CheckpointError extends SpoolError {
  declare readonly code: CheckpointErrorCode;

  constructor(code: CheckpointErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}
