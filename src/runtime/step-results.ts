import type { ActionErrorData, ActionStatus } from "../actions/index.js";
import type { PageResult } from "../continuity/index.js";
import type { ContentBlock, ProviderMessage, ToolResult } from "../providers/index.js";
import type { SpoolEvent } from "../spec/index.js";
import {
  formatActionResults,
  RESULT_TEXT_MAX,
  type ReportedAction,
  toolResultText,
} from "./action-results.js";
import { nativeToolName } from "./native-tools.js";
import { pageImage, pageResultOf } from "./page-slot.js";

/** What one step left in the log: its model message and its actions' outcomes. */
export interface StepRecord {
  content?: ContentBlock[];
  /** Action ids of native tool calls, which go back as `tool` results. */
  native: Set<string>;
  actions: Map<string, ReportedAction>;
  protocolErrors: string[];
  interrupted: boolean;
}

/** A copy of `record` that the events applied to the original later leave unchanged. */
export function copyStepRecord(record: StepRecord): StepRecord {
  return {
    ...(record.content ? { content: record.content } : {}),
    native: new Set(record.native),
    actions: new Map([...record.actions].map(([id, action]) => [id, { ...action }])),
    protocolErrors: [...record.protocolErrors],
    interrupted: record.interrupted,
  };
}

const TERMINAL: Record<string, ActionStatus | "interrupted"> = {
  "action.succeeded": "succeeded",
  "action.failed": "failed",
  "action.timed-out": "timed-out",
  "action.skipped": "skipped",
  "action.cancelled": "cancelled",
  "action.interrupted": "interrupted",
};

/** Records an `action.*` outcome of the step (the last terminal event of an action wins). */
export function applyOutcome(record: StepRecord, event: SpoolEvent): void {
  const status = TERMINAL[event.type];
  if (status === undefined) return;
  const data = event.data as { action_id: string } & Record<string, unknown>;
  if (event.type === "action.timed-out" && data.will_retry === true) return;
  const known = record.actions.get(data.action_id);
  const action: ReportedAction = known ?? {
    id: data.action_id,
    type: "tool",
    name: typeof data.name === "string" ? data.name : "?",
    status,
  };
  // A re-run after an interruption ends with its own terminal event: the last one wins.
  action.status = status;
  if (event.type === "action.succeeded") action.output = data.output;
  if (event.type === "action.failed") action.error = data.error as ActionErrorData;
  if (event.type === "action.timed-out") {
    action.error = { code: "action.timed-out", message: `timed out after ${data.timeout_ms} ms` };
  }
  if (event.type === "action.skipped") {
    action.message = String(data.message);
    if (data.error !== undefined) action.error = data.error as ActionErrorData;
  }
  if (event.type === "action.cancelled" || event.type === "action.interrupted") {
    action.message = String(data.reason);
  }
  record.actions.set(action.id, action);
}

/** One message that reports a step's results, with the browser page results it holds. */
export interface ResultMessage {
  message: ProviderMessage;
  pages?: PageResult[];
}

/** The messages that report a step's results: `tool` results for native calls, then text. */
export function resultMessages(record: StepRecord | undefined): ResultMessage[] {
  if (!record) return [{ message: { role: "user", content: formatActionResults([], [], false) } }];
  const results: ToolResult[] = [];
  const reported: ReportedAction[] = [];
  const nativePages: PageResult[] = [];
  const textPages: PageResult[] = [];
  let position = 0;
  for (const action of record.actions.values()) {
    const native = record.native.has(action.id);
    const page = pageResultOf(action, native, position++);
    if (page) (native ? nativePages : textPages).push(page);
    if (native) {
      results.push({
        toolCallId: action.id,
        name: nativeToolName(action.name),
        output: toolResultText(action),
        isError: action.status !== "succeeded",
        ...(page?.kind === "screenshot" ? { images: [pageImage(page)] } : {}),
      });
    } else {
      reported.push(action);
    }
  }
  // A native call that never reached the scheduler still needs its result.
  for (const id of record.native) {
    if (!record.actions.has(id)) {
      results.push({ toolCallId: id, output: "not run: the step ended first", isError: true });
    }
  }
  const messages: ResultMessage[] = [];
  if (results.length > 0) {
    messages.push({
      message: { role: "tool", results },
      ...(nativePages.length > 0 ? { pages: nativePages } : {}),
    });
  }
  if (reported.length > 0 || record.protocolErrors.length > 0 || results.length === 0) {
    const text = formatActionResults(reported, record.protocolErrors, record.interrupted);
    // A screenshot reaches the model as an image after the results text.
    const images = textPages.filter((page) => page.kind === "screenshot").map(pageImage);
    messages.push({
      message: {
        role: "user",
        content: images.length > 0 ? [{ type: "text", text }, ...images] : text,
      },
      ...(textPages.length > 0 ? { pages: textPages } : {}),
    });
  }
  return messages;
}

/** The whole texts of a step's results, before `RESULT_TEXT_MAX` cuts them ("" for the text). */
export function wholeResults(record: StepRecord): Map<string, string> {
  const wholes = new Map<string, string>();
  const reported: ReportedAction[] = [];
  let clipped = false;
  for (const action of record.actions.values()) {
    const text = toolResultText(action, true);
    if (text.length <= RESULT_TEXT_MAX) {
      if (!record.native.has(action.id)) reported.push(action);
      continue;
    }
    if (record.native.has(action.id)) wholes.set(action.id, text);
    else {
      reported.push(action);
      clipped = true;
    }
  }
  if (clipped) {
    wholes.set("", formatActionResults(reported, record.protocolErrors, record.interrupted, true));
  }
  return wholes;
}
