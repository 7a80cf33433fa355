import { canonicalJson, type SpoolEvent } from "../spec/index.js";
import { GraphFold } from "./knowledge-graph.js";
import { cell, code, fenced, formatDuration, oneLine } from "./knowledge-text.js";
import { ThreadMembership, taskStepId } from "./thread-streams.js";

interface ActionState {
  id: string;
  label: string;
  line: string;
}

interface StepState {
  id: string;
  index: number | undefined;
  model: string;
  blocks: string[];
  actions: Map<string, ActionState>;
  footer: string;
}

interface ContentData {
  type: string;
  text?: string;
  name?: string;
  id?: string;
  input?: unknown;
  input_text?: string;
}

/**
 * A thread's knowledge markdown as a fold over its events (in seq order): title and directive,
 * one section per model step (assistant text, reasoning in a collapsed `<details>`, tool calls
 * with their inputs, action results, usage), and a node status table per workflow graph. Token
 * deltas are ignored: the text comes from `message.completed`. Pure and deterministic.
 */
export class KnowledgeFold {
  readonly #membership: ThreadMembership | undefined;
  #thread: string | undefined;
  #directive: string | undefined;
  #model: string | undefined;
  #status = "🔄 running";
  readonly #steps = new Map<string, StepState>();
  readonly #graphs = new GraphFold();

  /** `thread`: pick that thread's events from a whole continuity; without it, every event counts. */
  constructor(thread?: string) {
    this.#thread = thread;
    this.#membership = thread === undefined ? undefined : new ThreadMembership(thread);
  }

  /** Folds one event. */
  push(event: SpoolEvent): void {
    if (event.type === "token.delta") return;
    if (this.#membership && !this.#membership.accept(event)) return;
    const data = event.data as Record<string, unknown>;
    if (event.stream.kind === "thread") this.#thread ??= event.stream.id;
    switch (event.type) {
      case "thread.started":
        this.#directive = String(data.directive);
        if (typeof data.model === "string") this.#model = data.model;
        this.#status = "🔄 running";
        return;
      case "thread.completed":
        this.#status = "✅ completed";
        return;
      case "thread.failed":
        this.#status = `❌ failed: ${cell(String(data.message))} (${cell(String(data.code))})`;
        return;
      case "thread.cancelled":
        this.#status = `⏹️ cancelled: ${cell(String(data.reason))}`;
        return;
      case "thread.suspended":
        this.#status = `⏸️ suspended: ${cell(String(data.reason))}`;
        return;
      case "thread.resumed":
        this.#status = "🔄 running";
        return;
      case "thread.continued":
        this.#status = `➡️ continued in ${code(String(data.continuation))}`;
        return;
    }
    this.#graphs.push(event);
    if (event.type === "step.started" && data.kind === "model" && event.stream.kind === "step") {
      const step = this.#step(event.stream.id);
      step.index = data.index as number;
      step.model = String(data.model);
      this.#model ??= step.model;
      return;
    }
    const stepId =
      event.stream.kind === "step"
        ? event.stream.id
        : event.stream.kind === "task"
          ? taskStepId(event.stream.id, this.#steps)
          : undefined;
    if (stepId === undefined || !this.#steps.has(stepId)) return;
    this.#stepEvent(this.#steps.get(stepId)!, event.type, data);
  }

  /** The whole markdown file. */
  render(): string {
    const out: string[] = [`# Thread ${code(this.#thread ?? "unknown")}`, ""];
    const facts: string[] = [];
    if (this.#directive !== undefined) facts.push(`**Directive:** ${code(this.#directive)}`);
    if (this.#model !== undefined) facts.push(`**Model:** ${code(this.#model)}`);
    facts.push(`**Status:** ${this.#status}`);
    out.push(facts.join(" · "), "");
    for (const step of this.#steps.values()) {
      const title = step.index === undefined ? code(step.id) : `${step.index}`;
      out.push(`## Step ${title}${step.model ? ` · ${code(step.model)}` : ""}`, "");
      for (const block of step.blocks) out.push(block, "");
      if (step.actions.size > 0) {
        out.push("**Actions**", "");
        for (const action of step.actions.values()) out.push(`- ${action.line}`);
        out.push("");
      }
      if (step.footer) out.push(step.footer, "");
    }
    out.push(...this.#graphs.render());
    return `${out.join("\n").replace(/\n+$/, "")}\n`;
  }

  #step(id: string): StepState {
    let step = this.#steps.get(id);
    if (!step) {
      step = { id, index: undefined, model: "", blocks: [], actions: new Map(), footer: "" };
      this.#steps.set(id, step);
    }
    return step;
  }

  #stepEvent(step: StepState, type: string, data: Record<string, unknown>): void {
    switch (type) {
      case "message.completed":
      case "message.partial":
        step.blocks = (data.content as ContentData[]).flatMap(renderBlock);
        if (type === "message.partial") step.blocks.push("_(partial: the model call failed)_");
        step.footer = usageLine(data.usage, data.stop_reason);
        return;
      case "message.failed": {
        const error = data.error as { code: string; message: string };
        step.footer = `_The model call failed: ${cell(error.message)} (${cell(error.code)})_`;
        return;
      }
      case "step.completed":
        if (data.kind === "model") {
          const took = formatDuration(data.duration_ms as number);
          step.footer = `${usageLine(data.usage, data.stop_reason).slice(0, -1)} · ${took}_`;
        }
        return;
    }
    const id = typeof data.action_id === "string" ? data.action_id : undefined;
    if (id === undefined || !type.startsWith("action.")) return;
    let action = step.actions.get(id);
    if (type === "action.dispatched") {
      action = { id, label: `${data.type} ${code(String(data.name))}`, line: "" };
      action.line = `🔄 ${code(id)} ${action.label}: running`;
      step.actions.set(id, action);
      return;
    }
    action ??= { id, label: "", line: "" };
    step.actions.set(id, action);
    const head = `${code(id)}${action.label ? ` ${action.label}` : ""}`;
    const took =
      typeof data.duration_ms === "number" ? ` in ${formatDuration(data.duration_ms)}` : "";
    const error = data.error as { code: string; message: string } | undefined;
    switch (type) {
      case "action.succeeded":
        action.line = `✅ ${head}: succeeded${took} → ${code(summary(data.output))}`;
        return;
      case "action.failed":
        action.line = `❌ ${head}: failed${took}: ${cell(error?.message ?? "")} (${cell(error?.code ?? "")})`;
        return;
      case "action.timed-out":
        action.line = `⏱️ ${head}: timed out after ${formatDuration(data.timeout_ms as number)}`;
        return;
      case "action.skipped":
        action.line = `⏭️ ${head}: skipped (${cell(String(data.reason))})`;
        return;
      case "action.cancelled":
        action.line = `⏹️ ${head}: cancelled`;
        return;
    }
  }
}

/** The knowledge markdown of `events` (see `KnowledgeFold`); `thread` picks one thread's events. */
export function renderKnowledge(
  events: Iterable<SpoolEvent>,
  options: { thread?: string } = {},
): string {
  const fold = new KnowledgeFold(options.thread);
  for (const event of events) fold.push(event);
  return fold.render();
}

function renderBlock(block: ContentData): string[] {
  switch (block.type) {
    case "text":
      return block.text ? [block.text] : [];
    case "reasoning":
      return block.text
        ? [`<details>\n<summary>Reasoning</summary>\n\n${block.text}\n\n</details>`]
        : [];
    case "refusal":
      return [`> **Refused:** ${oneLine(block.text ?? "")}`];
    case "tool-call": {
      const input = "input" in block ? canonicalJson(block.input) : (block.input_text ?? "");
      return [
        `**Tool call** ${code(block.name ?? "")} (${code(block.id ?? "")})`,
        fenced(input, "json"),
      ];
    }
    default:
      return [];
  }
}

function usageLine(usage: unknown, stop: unknown): string {
  const counts = usage as {
    input_tokens: number;
    output_tokens: number;
    cache_read_tokens: number;
  };
  const cache = counts.cache_read_tokens > 0 ? ` (${counts.cache_read_tokens} cached)` : "";
  return `_Usage: ${counts.input_tokens} input${cache} · ${counts.output_tokens} output tokens · stop: ${String(stop)}_`;
}

function summary(output: unknown): string {
  if (output === undefined) return "";
  return oneLine(typeof output === "string" ? output : canonicalJson(output), 200);
}
