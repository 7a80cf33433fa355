import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Codes a workflow raises; each message says what was wrong and how to fix it. */
export type WorkflowErrorCode =
  /** The YAML is not valid YAML, or the definition fails its schema or graph checks. */
  | "workflow.invalid"
  /** No workflow has the name asked for. */
  | "workflow.unknown"
  /** The action's parameters do not match the workflow's `inputs`. */
  | "workflow.bad-inputs"
  /** A step failed and its `on_error` is `fail`. */
  | "workflow.step-failed"
  /** Some items of a `foreach` step failed. */
  | "workflow.foreach-failed"
  /** A `foreach` reference did not resolve to a list. */
  | "workflow.foreach-not-list"
  /** An attempt of a step ran past its `timeout_ms`. */
  | "workflow.timeout"
  /** The workflow was cancelled (its action timed out or its step was cancelled). */
  | "workflow.cancelled";

/** A failure of a workflow: its definition, its inputs, or one of its steps. */
export class WorkflowError extends SpoolError {
  declare readonly code: WorkflowErrorCode;

  constructor(code: WorkflowErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}
