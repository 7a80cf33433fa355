import { substituteText } from "../../../src/actions/substitute-parameters.js";
import { createProtocolParser, type ProtocolEvent } from "../../../src/protocol/index.js";
import type { SpoolEvent } from "../../../src/spec/index.js";
import { parseStepStreamId } from "../../../src/transcript/thread-streams.js";

/** Where an action stands, from its lifecycle events. */
export type ActionStatus =
  | "running"
  | "succeeded"
  | "failed"
  | "skipped"
  | "cancelled"
  | "interrupted";

/** One action of a step, as the conversation shows it. */
export interface ActionItem {
  id: string;
  type: string;
  name: string;
  parameters: unknown;
  status: ActionStatus;
  /** When it was dispatched (ISO time): a running action's elapsed time counts from here. */
  startedAt: string;
  durationMs?: number;
  /** What went wrong, or why it was skipped or cancelled; or a retry's note while running. */
  note?: string;
  attempt: number;
  output?: unknown;
}

/** A thought or response block of a step, in the order the model wrote them. */
export interface TextBlock {
  /** Unique within its step, in the order written. */
  id: number;
  kind: "thought" | "response";
  text: string;
}

/** One model call in the conversation. */
export interface StepItem {
  kind: "step";
  key: string;
  step: string;
  thread: string;
  depth: number;
  model?: string;
  blocks: TextBlock[];
  actions: ActionItem[];
  /** True until its message is complete (or the step ended another way). */
  streaming: boolean;
  usage?: { input: number; output: number };
  durationMs?: number;
}

/** What the conversation lists, in log order. */
export type ConversationItem =
  | {
      kind: "turn";
      key: string;
      seq: number;
      actor: string;
      text: string;
      ts: string;
      delivery: boolean;
    }
  | StepItem
  | { kind: "handoff"; key: string; from: string; to: string; text: string }
  | { kind: "notice"; key: string; text: string; tone: "quiet" | "warn" | "error" };

interface OpenStep {
  item: StepItem;
  parser: ReturnType<typeof createProtocolParser>;
  streamed: string;
}

/**
 * Folds a continuity's events into the conversation a person reads: turns, each model step's
 * thoughts and responses (markdown) as they stream, its actions with status and duration, handoffs
 * and runs that did not complete. Mirrors the terminal's `ConversationView`: streamed text comes
 * from `token.delta` events of `text:*` blocks through the same protocol parser, and a step's
 * `message.completed` replaces whatever streamed with the final message, so its text shows exactly
 * once whether its deltas were dropped, coalesced or seen twice across a reload. Summarizer, hook
 * and worker threads are left out. `push` takes events in seq order and never throws.
 */
export class ConversationFold {
  readonly items: ConversationItem[] = [];
  private readonly steps = new Map<string, OpenStep>();
  private readonly depths = new Map<string, number>();
  private readonly hidden = new Set<string>();
  private readonly variables = new Map<string, Map<string, unknown>>();
  /** True while a foreground run is open (between `run.started` and `run.completed`). */
  running = false;

  push(event: SpoolEvent): void {
    if (event.stream.kind === "worker" || this.isHidden(event.stream.id)) return;
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case "turn.added":
        this.items.push({
          kind: "turn",
          key: `t${event.seq}`,
          seq: event.seq,
          actor: event.actor ?? "?",
          text: String(data.text ?? ""),
          ts: event.ts,
          delivery: Array.isArray(data.sources) && data.sources.length > 0,
        });
        return;
      case "thread.started": {
        this.threadStarted(event.stream.id, data);
        return;
      }
      case "run.started":
        if (this.depthOf(event.stream.id) === 0) this.running = true;
        return;
      case "run.completed": {
        this.runCompleted(event, data);
        return;
      }
      case "step.started":
        if (data.kind === "model") this.open(event.stream.id).item.model = String(data.model);
        return;
      case "token.delta": {
        const block = String(data.block ?? "");
        if (!block.startsWith("text:")) return;
        const step = this.open(event.stream.id);
        if (!step.item.streaming) return;
        step.streamed += String(data.text ?? "");
        this.apply(step, step.parser.push(String(data.text ?? "")));
        return;
      }
      case "message.completed": {
        this.completed(event.stream.id, data);
        return;
      }
      case "message.failed":
      case "step.interrupted":
        this.endStreaming(event.stream.id);
        if (event.type === "step.interrupted") {
          this.notice(event, `step interrupted: ${String(data.reason)}`, "warn");
        }
        return;
      case "step.completed": {
        if (data.kind !== "model") return;
        const step = this.open(event.stream.id);
        this.endStreaming(event.stream.id);
        const usage = data.usage as { input_tokens: number; output_tokens: number } | undefined;
        if (usage) step.item.usage = { input: usage.input_tokens, output: usage.output_tokens };
        if (typeof data.duration_ms === "number") step.item.durationMs = data.duration_ms;
        return;
      }
      case "variable.set": {
        const { thread } = parseStepStreamId(event.stream.id);
        const key = event.stream.kind === "thread" ? event.stream.id : thread;
        let variables = this.variables.get(key);
        if (!variables) {
          variables = new Map();
          this.variables.set(key, variables);
        }
        variables.set(String(data.name), data.value);
        return;
      }
      case "thread.continued":
        this.endStreaming(event.stream.id);
        this.items.push({
          kind: "handoff",
          key: `h${event.seq}`,
          from: event.stream.id,
          to: String(data.continuation),
          text: handoffText(data),
        });
        return;
      case "limit.reached": {
        this.notice(event, `limit reached: ${data.limit} ${data.value} of ${data.max}`, "warn");
        return;
      }
      case "turn.queued": {
        this.notice(event, `turn queued (position ${data.position})`, "quiet");
        return;
      }
      default:
        if (event.type.startsWith("action.")) this.action(event, data);
    }
  }

  /** The step's text `$references` resolved from its thread's variables (as the chat showed). */
  substitute(item: StepItem, text: string): string {
    if (!text.includes("$")) return text;
    const variables = this.variables.get(item.thread);
    return substituteText(text, {
      lookup: (name) => (variables?.has(name) ? { value: variables.get(name) } : undefined),
    });
  }

  private threadStarted(thread: string, data: Record<string, unknown>): void {
    const parent = data.parent as { thread: string; depth: number } | undefined;
    if (!parent) return;
    if (thread.includes("@") || this.hidden.has(parent.thread)) this.hidden.add(thread);
    else this.depths.set(thread, parent.depth);
  }

  private runCompleted(event: SpoolEvent, data: Record<string, unknown>): void {
    if (this.depthOf(event.stream.id) === 0) this.running = false;
    const status = String(data.status);
    if (status === "completed" || status === "continued") return;
    const error = data.error as { message?: string } | undefined;
    const why = error?.message ? `: ${error.message}` : "";
    this.notice(event, `run ${status}${why}`, status === "failed" ? "error" : "warn");
  }

  private completed(stream: string, data: Record<string, unknown>): void {
    const step = this.open(stream);
    const content = (data.content ?? []) as { type: string; text?: string }[];
    let text = "";
    for (const block of content) if (block.type === "text") text += block.text ?? "";
    // The final message replaces what streamed: parse it whole with a fresh parser.
    step.item.blocks = [];
    const parser = createProtocolParser();
    this.apply(step, [...parser.push(text), ...parser.end()]);
    step.streamed = text;
    step.item.streaming = false;
  }

  private endStreaming(stream: string): void {
    const step = this.steps.get(stream);
    if (!step?.item.streaming) return;
    step.item.streaming = false;
    this.apply(step, step.parser.end());
  }

  private apply(step: OpenStep, events: readonly ProtocolEvent[]): void {
    const blocks = step.item.blocks;
    for (const event of events) {
      if (event.type === "block-start" && (event.kind === "thought" || event.kind === "response")) {
        blocks.push({ id: blocks.length, kind: event.kind, text: "" });
      } else if (event.type === "block-delta") {
        if (event.kind !== "thought" && event.kind !== "response") continue;
        const last = blocks.at(-1);
        if (last && last.kind === event.kind) last.text += event.text;
        else blocks.push({ id: blocks.length, kind: event.kind, text: event.text });
      }
    }
  }

  private open(stream: string): OpenStep {
    let step = this.steps.get(stream);
    if (!step) {
      const { thread } = parseStepStreamId(stream);
      const item: StepItem = {
        kind: "step",
        key: `s${stream}`,
        step: stream,
        thread,
        depth: this.depthOf(stream),
        blocks: [],
        actions: [],
        streaming: true,
      };
      step = { item, parser: createProtocolParser(), streamed: "" };
      this.steps.set(stream, step);
      this.items.push(item);
    }
    return step;
  }

  private action(event: SpoolEvent, data: Record<string, unknown>): void {
    const id = String(data.action_id ?? "");
    if (id === "" || event.stream.kind !== "step") return;
    const step = this.open(event.stream.id);
    const action = step.item.actions.find((candidate) => candidate.id === id);
    if (event.type === "action.dispatched") {
      if (action) return;
      step.item.actions.push({
        id,
        type: String(data.type),
        name: String(data.name),
        parameters: data.parameters,
        status: "running",
        startedAt: event.ts,
        attempt: 1,
      });
      return;
    }
    if (!action) return;
    applyActionEvent(action, event.type, data);
  }

  private notice(event: SpoolEvent, text: string, tone: "quiet" | "warn" | "error"): void {
    this.items.push({ kind: "notice", key: `n${event.seq}`, text, tone });
  }

  private depthOf(stream: string): number {
    return this.depths.get(stream) ?? this.depths.get(parseStepStreamId(stream).thread) ?? 0;
  }

  private isHidden(stream: string): boolean {
    if (stream.startsWith("feed@")) return true;
    const { thread } = parseStepStreamId(stream);
    if (this.hidden.has(stream) || this.hidden.has(thread)) return true;
    if (this.depths.has(stream) || this.depths.has(thread)) return false;
    return thread.includes("@");
  }
}

/** Updates `action` in place from one of its lifecycle events (as the chat's `actionUpdate`). */
function applyActionEvent(
  action: ActionItem,
  type: string,
  data: Record<string, unknown>,
): ActionItem {
  const duration = typeof data.duration_ms === "number" ? data.duration_ms : undefined;
  const error = data.error as { message?: string } | undefined;
  switch (type) {
    case "action.started":
      action.attempt = Number(data.attempt ?? 1);
      if (action.attempt > 1) action.note = `attempt ${action.attempt}`;
      break;
    case "action.retrying":
      action.note = `failed (${error?.message ?? "error"}), retrying in ${data.delay_ms} ms`;
      break;
    case "action.succeeded":
      action.status = "succeeded";
      action.durationMs = duration;
      action.output = data.output;
      action.note = undefined;
      break;
    case "action.failed":
      action.status = "failed";
      action.durationMs = duration;
      action.note = error?.message;
      break;
    case "action.timed-out":
      if (data.will_retry) action.note = `timed out after ${data.timeout_ms} ms, retrying`;
      else {
        action.status = "failed";
        action.durationMs = duration;
        action.note = `timed out after ${data.timeout_ms} ms`;
      }
      break;
    case "action.skipped":
      action.status = "skipped";
      action.note = `${data.reason}: ${data.message}`;
      break;
    case "action.cancelled":
      action.status = "cancelled";
      action.durationMs = duration;
      action.note = String(data.reason ?? "");
      break;
    case "action.interrupted":
      action.status = "interrupted";
      action.note = data.rerun ? "interrupted, re-run" : "interrupted, not re-run";
      break;
  }
  return action;
}

/** `context handed off to a new thread (pressure 0.91, 7,402 → 2,310 tokens, summary 812 tokens)` */
export function handoffText(data: Record<string, unknown>): string {
  const details: string[] = [];
  const number = (value: unknown) => Math.round(Number(value)).toLocaleString("en-US");
  if (typeof data.pressure_ratio === "number") {
    details.push(`pressure ${data.pressure_ratio.toFixed(2)}`);
  }
  if (typeof data.tokens_before === "number" && typeof data.tokens_after === "number") {
    details.push(`${number(data.tokens_before)} → ${number(data.tokens_after)} tokens`);
  }
  if (typeof data.summary_tokens === "number") {
    details.push(`summary ${number(data.summary_tokens)} tokens`);
  } else if (data.mode === "trailing-only") details.push("no summary: recent messages only");
  if (details.length === 0) details.push(String(data.reason ?? "handoff"));
  return `context handed off to a new thread (${details.join(", ")})`;
}
