import type { ActionErrorData, ActionStatus } from "../actions/index.js";
import type { ActionType } from "../protocol/index.js";

/** An action as the model is told about it in the next step. */
export interface ReportedAction {
  id: string;
  type: ActionType;
  name: string;
  status: ActionStatus | "interrupted" | "pending";
  output?: unknown;
  error?: ActionErrorData;
  /** Why it was skipped, cancelled or interrupted. */
  message?: string;
}

/** Longest output text one action contributes to the next step's message. */
export const RESULT_TEXT_MAX = 16_000;

/**
 * The structured message that carries a step's action results to the model:
 *
 * ```
 * <action_results>
 * <result id="a1" type="tool" name="fs.read" status="succeeded">{"text":"…"}</result>
 * <result id="a2" type="tool" name="fs.write" status="failed">tool.path-outside-workspace: …</result>
 * </action_results>
 * ```
 *
 * followed by the protocol errors of the step (each to be fixed in the next output), and a
 * note when a crash cut the step off. Outputs longer than `RESULT_TEXT_MAX` are cut, saying so
 * (unless `whole`: the text a cut input's artifact keeps). Deterministic: the same actions give
 * the same text (replay depends on it).
 */
export function formatActionResults(
  actions: readonly ReportedAction[],
  protocolErrors: readonly string[],
  interrupted: boolean,
  whole = false,
): string {
  const lines: string[] = [];
  if (interrupted) {
    lines.push(
      "<note>Your previous output was cut off by a restart. Actions it had started are reported below; ask again for anything still needed.</note>",
    );
  }
  if (actions.length > 0) {
    lines.push("<action_results>");
    for (const action of actions) {
      lines.push(`${resultOpening(action)}${escapeText(toolResultText(action, whole))}</result>`);
    }
    lines.push("</action_results>");
  }
  if (protocolErrors.length > 0) {
    lines.push("<protocol_errors>");
    for (const message of protocolErrors) lines.push(`<error>${escapeText(message)}</error>`);
    lines.push("</protocol_errors>");
  }
  if (lines.length === 0) lines.push("<continue/>");
  else lines.push("Continue.");
  return lines.join("\n");
}

/** The tag one action's result starts with in the results text. */
export function resultOpening(action: Pick<ReportedAction, "id" | "type" | "name" | "status">) {
  return `<result id="${attr(action.id)}" type="${action.type}" name="${attr(action.name)}" status="${action.status}">`;
}

/**
 * `content` (a results text) with the result that starts with `opening` holding `text` instead,
 * or `undefined` when `content` does not hold that result whole (a cut kept only its start). The
 * result is found by its opening tag: a result's text is escaped, so it holds no `<`, and an
 * opening tag with its id is found only where that result starts.
 */
export function replaceResultText(
  content: string,
  opening: string,
  text: string,
): string | undefined {
  const start = content.indexOf(opening);
  if (start < 0) return undefined;
  const end = content.indexOf("</result>", start + opening.length);
  if (end < 0) return undefined;
  return `${content.slice(0, start + opening.length)}${escapeText(text)}${content.slice(end)}`;
}

/**
 * The text of one action's result: its output, or its error, skip or cancel message; cut at
 * `RESULT_TEXT_MAX` unless `whole`.
 */
export function toolResultText(action: ReportedAction, whole = false): string {
  const bound = whole ? (text: string) => text : clip;
  if (action.status === "succeeded") return bound(jsonText(action.output));
  if (action.error) return bound(`${action.error.code}: ${action.error.message}`);
  if (action.message) return bound(action.message);
  return action.status;
}

function jsonText(value: unknown): string {
  if (value === undefined) return "null";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function clip(text: string): string {
  if (text.length <= RESULT_TEXT_MAX) return text;
  return `${text.slice(0, RESULT_TEXT_MAX)}… [${text.length - RESULT_TEXT_MAX} more characters cut; store the output under an output_key and read parts of it]`;
}

function attr(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/** Keeps a result from closing the protocol's tags early. */
function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
}
