import type { ActionRequest } from "../protocol/index.js";
import type { LogWrite } from "./action-entry.js";
import { toJsonValue } from "./json-value.js";
import type { AttemptsResult } from "./run-attempts.js";
import { clampMessage } from "./scheduler-messages.js";
import type { ActionOutcome } from "./step-outcome.js";

/** An action's end: its outcome, and the events that record it, in order. */
export interface TerminalEvents {
  outcome: Partial<ActionOutcome>;
  writes: LogWrite[];
}

/**
 * How the attempts' result is recorded, per `on_error`:
 * - succeeded: `action.succeeded` with the output in its JSON form, then `variable.set` when the
 *   action has an `output_key`;
 * - `on_error: "skip"`: any failure or final timeout is one `action.skipped` (`on-error-skip`)
 *   carrying the error (dependents then run);
 * - otherwise a final timeout is `action.timed-out` (`will_retry: false`) and a failure
 *   `action.failed`.
 * Cancellation is recorded by the canceller, not here (`undefined`).
 */
export function terminalEvents(
  request: ActionRequest,
  result: AttemptsResult,
): TerminalEvents | undefined {
  const id = request.id;
  if (result.kind === "cancelled") return undefined;
  if (result.kind === "succeeded") {
    const output = toJsonValue(result.output);
    const writes: LogWrite[] = [
      [
        "action.succeeded",
        { action_id: id, attempt: result.attempt, output, duration_ms: result.durationMs },
      ],
    ];
    if (request.outputKey !== undefined) {
      writes.push([
        "variable.set",
        { name: request.outputKey, value: output, by: "action", action_id: id },
      ]);
    }
    return { outcome: { status: "succeeded", output }, writes };
  }
  const error =
    result.kind === "failed"
      ? result.error
      : {
          code: "action.timeout",
          message: `attempt ${result.attempt} ran past its timeout of ${result.timeoutMs} ms`,
          retryable: true,
        };
  if (request.onError === "skip") {
    const message = clampMessage(`on_error is "skip": ${error.code}: ${error.message}`);
    return {
      outcome: { status: "skipped", reason: "on-error-skip", message, error },
      writes: [["action.skipped", { action_id: id, reason: "on-error-skip", message }]],
    };
  }
  if (result.kind === "timed-out") {
    const data = {
      action_id: id,
      attempt: result.attempt,
      timeout_ms: result.timeoutMs,
      duration_ms: result.durationMs,
      will_retry: false,
    };
    return { outcome: { status: "timed-out", error }, writes: [["action.timed-out", data]] };
  }
  const data = { action_id: id, attempt: result.attempt, error, duration_ms: result.durationMs };
  return { outcome: { status: "failed", error }, writes: [["action.failed", data]] };
}
