import type { ActionMode, ActionType, SourcePosition } from "../protocol/index.js";

/** An action's failure as the log and the model see it (the catalog's `actionError`). */
export interface ActionErrorData {
  code: string;
  message: string;
  retryable?: boolean;
}

/** Why an action was skipped (the catalog's `action.skipped` reasons). */
export type SkipReason =
  | "dependency-failed"
  | "dependency-missing"
  | "dependency-cycle"
  | "self-dependency"
  | "on-error-skip"
  | "unknown-executor"
  | "not-allowed"
  | "bad-parameters";

/** How an action ended. */
export type ActionStatus = "succeeded" | "failed" | "timed-out" | "skipped" | "cancelled";

/**
 * The end of one action, as the runtime reports it to the model in the next step.
 * `output` is set when it succeeded (in its JSON form); `error` when it failed, timed out, or was
 * skipped by `on_error: "skip"`; `reason` (and `causeAction`) when it was skipped.
 */
export interface ActionOutcome {
  id: string;
  type: ActionType;
  mode: ActionMode;
  name: string;
  status: ActionStatus;
  /** Attempts made (0 when it never ran). */
  attempts: number;
  output?: unknown;
  error?: ActionErrorData;
  reason?: SkipReason;
  causeAction?: string;
  /** The skip or cancel message. */
  message?: string;
}

/**
 * Something wrong with what the model wrote, to be told to it: dependency cycles, self- and
 * missing dependencies, unknown or refused actions, and (from the step runner) protocol errors.
 * Failures of actions at run time are outcomes, not step errors; a skip caused by another action's
 * failure is reported once, at its cause.
 */
export interface StepError {
  /**
   * `action.dependency-cycle`, `action.self-dependency`, `action.dependency-missing`,
   * `action.unknown-executor`, `action.not-allowed`, `action.bad-parameters`,
   * `action.duplicate-id`, a parser `protocol.*` code, `log.write-failed`, or (runner)
   * `step.output-failed` and `step.internal`.
   */
  code: string;
  /** What was wrong and how to fix it. */
  message: string;
  actionId?: string;
  /** Where in the step's output, when known. */
  at?: SourcePosition;
  /** The members of a dependency cycle, from the action that closed it along its dependencies. */
  cycle?: string[];
}

/** What `settled()` resolves with: every tracked action's outcome and the step's errors. */
export interface StepOutcome {
  /** Outcomes of `sync` and `async` actions, in submit order (fire_and_forget is not reported). */
  actions: ActionOutcome[];
  errors: StepError[];
  /** True when the step was cancelled. */
  cancelled: boolean;
}
