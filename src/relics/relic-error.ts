import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Options of `RelicError`: a Spool error's, plus whether the relic's state is broken. */
export interface RelicErrorOptions extends SpoolErrorOptions {
  /** The relic cannot go on as it is: its host stops it and restarts it on the next call. */
  fatal?: boolean;
}

/**
 * A failure of a relic or its host. Codes are dotted: `relic.unknown`, `relic.unknown-method`,
 * `relic.bad-parameters`, `relic.unavailable`, `relic.closed`, `relic.start-failed`, and the
 * relic's own (`relic.kv.conflict`, `relic.http.host-not-allowed`, …). Messages say what was
 * wrong and how to fix it.
 */
export class RelicError extends SpoolError {
  /** True when the relic must be restarted before it can serve again. */
  readonly fatal: boolean;

  constructor(code: string, message: string, options: RelicErrorOptions = {}) {
    const { fatal, ...rest } = options;
    super(code, message, rest);
    this.fatal = fatal ?? false;
  }
}

/** True when `error` says its relic is broken and must be restarted. */
export function isFatalRelicError(error: unknown): boolean {
  return error instanceof RelicError && error.fatal;
}
