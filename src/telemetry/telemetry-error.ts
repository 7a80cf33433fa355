import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** A telemetry setting that cannot work (a bad endpoint) or an export the collector refused. */
export class TelemetryError extends SpoolError {
  constructor(code: string, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}
