import type { ActionLogEntry } from "../../actions/index.js";
import { oneLine } from "../format.js";
import { type ActionEnd, type ActionView, formatDuration } from "./action-lines.js";

/** What one action lifecycle event changes in the chat's view of that action. */
export type ActionUpdate =
  /** It began: shown from `view` (`action.dispatched`), or from its parsed request when absent. */
  | { kind: "start"; view?: ActionView }
  /** Still running, with a word on why it takes longer (another attempt, a retry). */
  | { kind: "note"; note: string }
  /** It ended. */
  | { kind: "end"; end: ActionEnd };

/**
 * The update an action lifecycle event makes, with the id of its action; `undefined` for
 * events the chat does not show (`action.progress`, variable and feed changes, protocol errors).
 */
export function actionUpdate(
  entry: ActionLogEntry,
): { id: string; update: ActionUpdate } | undefined {
  switch (entry.type) {
    case "action.dispatched": {
      const { type, name, parameters } = entry.data;
      return {
        id: entry.data.action_id,
        update: { kind: "start", view: { type, name, parameters } },
      };
    }
    case "action.started":
      return {
        id: entry.data.action_id,
        update:
          entry.data.attempt > 1
            ? { kind: "note", note: `attempt ${entry.data.attempt}` }
            : { kind: "start" },
      };
    case "action.retrying":
      return {
        id: entry.data.action_id,
        update: {
          kind: "note",
          note: `failed (${oneLine(entry.data.error.message)}), retrying in ${formatDuration(entry.data.delay_ms)}`,
        },
      };
    case "action.succeeded":
      return {
        id: entry.data.action_id,
        update: { kind: "end", end: { status: "succeeded", durationMs: entry.data.duration_ms } },
      };
    case "action.failed":
      return {
        id: entry.data.action_id,
        update: {
          kind: "end",
          end: {
            status: "failed",
            durationMs: entry.data.duration_ms,
            message: entry.data.error.message,
          },
        },
      };
    case "action.timed-out": {
      const message = `timed out after ${formatDuration(entry.data.timeout_ms)}`;
      return {
        id: entry.data.action_id,
        update: entry.data.will_retry
          ? { kind: "note", note: `${message}, retrying` }
          : { kind: "end", end: { status: "failed", durationMs: entry.data.duration_ms, message } },
      };
    }
    case "action.skipped":
      return {
        id: entry.data.action_id,
        update: {
          kind: "end",
          end: { status: "skipped", reason: entry.data.reason, message: entry.data.message },
        },
      };
    case "action.cancelled":
      return {
        id: entry.data.action_id,
        update: {
          kind: "end",
          end: {
            status: "cancelled",
            reason: entry.data.reason,
            ...(entry.data.duration_ms !== undefined ? { durationMs: entry.data.duration_ms } : {}),
          },
        },
      };
    default:
      return undefined;
  }
}
