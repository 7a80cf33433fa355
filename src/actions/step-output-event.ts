import type { ActionRequest, ProtocolEvent } from "../protocol/index.js";
import type { ActionLogEntry } from "./action-log.js";
import type { ActionErrorData, StepError, StepOutcome } from "./step-outcome.js";

/** How a step ended, as the runtime needs it to decide what comes next. */
export interface StepSummary extends StepOutcome {
  /** A `<response final="true">` (the default) was seen: the run may end after this step. */
  final: boolean;
  /** Protocol errors and scheduling errors, in the order they were found. */
  errors: StepError[];
}

/**
 * What `runStep` yields, in output order.
 * - The parser's block events; `response` deltas come after `$` substitution (a delta holding
 *   a reference may arrive later than the text around it was parsed, never out of order).
 * - `action`: an action was parsed and submitted (its lifecycle follows as `action-event`s).
 * - `action-event`: a lifecycle event the scheduler recorded (dispatched, started, progress, …).
 * - `step-error`: something wrong with the model's output (a parser error, a cycle, …).
 * - Exactly one terminal event: `step-end` with the summary, or `step-failed` when the output
 *   stream itself failed (the summary then shows the step's actions cancelled).
 */
export type StepOutputEvent =
  | Exclude<ProtocolEvent, { type: "action" } | { type: "error" }>
  | { type: "action"; action: ActionRequest; parentBlock?: number }
  | { type: "action-event"; entry: ActionLogEntry }
  | { type: "step-error"; error: StepError }
  | { type: "step-end"; summary: StepSummary }
  | { type: "step-failed"; error: ActionErrorData; summary: StepSummary };
