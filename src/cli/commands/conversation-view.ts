import { isWorkerThread } from "../../app/index.js";
import { isFeedSourceStream } from "../../feeds/index.js";
import {
  createProtocolParser,
  type ProtocolEvent,
  type ProtocolParser,
} from "../../protocol/index.js";
import { isBackgroundThread } from "../../runtime/index.js";
import type { EventData, SpoolEvent } from "../../spec/index.js";
import { parseStepStreamId } from "../../transcript/index.js";
import {
  createMarkdownStream,
  deliveryLine,
  isDeliveryTurn,
  type MarkdownStream,
  sourceEventLine,
} from "../chat/index.js";
import { oneLine, type Style, truncate } from "../format.js";
import { redactSecrets } from "../redact.js";
import { ViewVariables } from "./view-variables.js";

/** Options of `ConversationView`. */
export interface ConversationViewOptions {
  style: Style;
  /** Columns a one-line entry (an action, a usage line) may take; streamed text wraps instead. */
  width: number;
  /** Where the view writes; receives partial lines while model text streams. */
  write(chunk: string): void;
  /**
   * `full` (the default) shows everything below; `messages` shows only what was said (turns
   * and responses), handoffs and runs that did not complete: a recap of earlier messages.
   */
  detail?: "full" | "messages";
  /**
   * The actor whose turns are the user's own: shown as the chat's prompt showed them
   * (`you › text`), where anyone else's are `› who: text`. Default: none.
   */
  you?: string;
}

/** A turn longer than this many lines is folded: its first `FOLD_KEEP` lines, then a count. */
export const FOLD_LINES = 8;
const FOLD_KEEP = 5;

/** A model step being shown: its protocol parser and the text already fed to it. */
interface StepView {
  parser: ProtocolParser;
  /** The `text:*` delta text seen so far, in order: what the message's text must start with. */
  streamed: string;
  ended: boolean;
  /** Where its text starts: two spaces per level of child thread. */
  indent: string;
  /**
   * Response text from its first `$` on, by block: held until the step's actions have ended
   * (`step.completed`), then shown with its `$references` substituted, as the chat showed it.
   */
  held: Map<string, string>;
}

const INDENT = "  ";

/**
 * Renders a continuity's events as a conversation: turns, the model's thoughts (dim) and
 * responses (plain) as they stream, one line per action and its outcome, and quiet lines for
 * usage, limits, recovery and runs that did not complete. Child threads are indented by their
 * depth. A source's delivery turn is one quiet line (`deliveryLine`: its chunks, lines and
 * pattern matches), never its digest; a source's rotation, failure or end is one quiet line too
 * (`sourceEventLine`; not in `messages` detail).
 *
 * A continuity is one conversation across its threads: a handoff to a continuation thread is one
 * dim line (`── context handed off to a new thread (pressure 0.91, 7,402 → 2,310 tokens,
 * summary 812 tokens) ──`), and the messages the continuation was seeded with are not shown
 * again (they were shown when first said). The runtime's own work beside the conversation —
 * summarizer and hook threads, worker streams, hook firings — is not shown.
 *
 * Model text comes from `token.delta` events of `text:*` blocks, parsed with one protocol parser
 * per step; a step's `message.completed` supplies whatever its deltas did not (all of it when
 * they were dropped), so no text is shown twice. Control characters in logged text are removed
 * before anything reaches the terminal. Events it does not show are ignored; it never throws on
 * a well-formed event.
 */
export class ConversationView {
  private readonly steps = new Map<string, StepView>();
  private readonly actions = new Map<string, string>();
  private readonly depths = new Map<string, number>();
  /** Summarizer and hook threads (and anything they spawn): not part of the conversation. */
  private readonly hidden = new Set<string>();
  private atLineStart = true;
  /** The block text is streaming into; another block or a whole line starts a new line. */
  private streamKey: string | undefined;
  /** Trailing whitespace of the streaming block, written only if more text follows. */
  private pending = "";
  private blockHasText = false;
  /** The response block being rendered as markdown, as the chat renders it live. */
  private markdown: MarkdownStream | undefined;
  private readonly variables = new ViewVariables();

  constructor(private readonly options: ConversationViewOptions) {}

  /** Shows one event (in seq order). */
  push(event: SpoolEvent): void {
    const { style } = this.options;
    if (event.stream.kind === "worker" || this.isHidden(event.stream.id)) return;
    const full = this.options.detail !== "messages";
    const data = event.data as Record<string, unknown>;
    const textIndent = this.indentOf(event.stream.id);
    const indent = textIndent + INDENT;
    this.variables.push(event);
    switch (event.type) {
      case "turn.added": {
        const turn = data as EventData<"turn.added">;
        if (isDeliveryTurn(event.origin ?? undefined, turn)) {
          // A source's delivery is one quiet line: what arrived, never its digest.
          this.note(deliveryLine(cleanText(event.actor ?? "?"), cleanText(turn.text), turn), "");
          return;
        }
        const lines = cleanText(turn.text).trim().split("\n");
        const own = this.options.you !== undefined && event.actor === this.options.you;
        const label = own
          ? "you ›"
          : `${style.cyan("›")} ${style.bold(cleanText(event.actor ?? "?"))}:`;
        const pad = own ? " ".repeat(6) : INDENT;
        const shown = lines.length > FOLD_LINES ? lines.slice(0, FOLD_KEEP) : lines;
        this.line(`${label} ${shown.join(`\n${pad}`)}`, "");
        if (shown.length < lines.length) {
          this.line(style.dim(`… ${lines.length - shown.length} more lines`), pad);
        }
        return;
      }
      case "source.rotated":
      case "source.failed":
      case "source.exhausted": {
        // Whole, not cut to the width: a failure says how to fix it.
        const line = full ? sourceEventLine(event) : undefined;
        if (line !== undefined) this.line(style.dim(oneLine(cleanText(redactSecrets(line)))), "");
        return;
      }
      case "turn.queued": {
        const { position } = data as EventData<"turn.queued">;
        if (full) this.note(`… queued (position ${position})`, indent);
        return;
      }
      case "thread.started": {
        const { parent } = data as EventData<"thread.started">;
        if (!parent) return;
        if (isWorkerThread(event.stream.id, parent) || this.hidden.has(parent.thread)) {
          this.hidden.add(event.stream.id);
        } else {
          this.depths.set(event.stream.id, parent.depth);
        }
        return;
      }
      case "token.delta": {
        const delta = data as EventData<"token.delta">;
        if (!delta.block.startsWith("text:")) return;
        const step = this.step(event.stream.id, textIndent);
        if (step.ended) return;
        step.streamed += delta.text;
        this.parsed(event.stream.id, step, step.parser.push(delta.text));
        return;
      }
      case "message.completed": {
        const step = this.step(event.stream.id, textIndent);
        if (step.ended) return;
        const { content } = data as EventData<"message.completed">;
        let text = "";
        for (const block of content) if (block.type === "text") text += block.text;
        // Whatever the deltas did not carry (all of it when they were dropped); a message that
        // disagrees with what streamed is not shown again.
        if (text.startsWith(step.streamed)) {
          this.parsed(event.stream.id, step, step.parser.push(text.slice(step.streamed.length)));
        }
        this.endStep(event.stream.id, step);
        return;
      }
      case "message.failed":
        this.endStepIfOpen(event.stream.id);
        this.release(event.stream.id);
        return;
      case "step.interrupted":
        this.endStepIfOpen(event.stream.id);
        this.release(event.stream.id);
        if (!full) return;
        this.line(
          `${style.yellow("⚠")} ${style.dim(`step interrupted: ${(data as EventData<"step.interrupted">).reason}`)}`,
          indent,
        );
        return;
      case "step.completed": {
        if (data.kind !== "model") return;
        this.endStepIfOpen(event.stream.id);
        this.release(event.stream.id);
        if (!full) return;
        const { usage } = data as Extract<EventData<"step.completed">, { kind: "model" }>;
        this.note(`↳ ${count(usage.input_tokens)} in · ${count(usage.output_tokens)} out`, indent);
        return;
      }
      case "limit.reached": {
        const limit = data as EventData<"limit.reached">;
        if (full) this.note(`limit reached: ${limit.limit} ${limit.value}/${limit.max}`, indent);
        return;
      }
      case "recovery.started": {
        // Every restart is logged; one that found nothing left open recovered nothing to show.
        const recovery = data as EventData<"recovery.started">;
        const found = recovery.open_runs.length + (recovery.open_tasks?.length ?? 0);
        if (full && found > 0) this.line(style.dim("— recovered after a restart —"), "");
        return;
      }
      case "thread.continued":
        this.endStepIfOpen(event.stream.id);
        this.note(handoffText(data as EventData<"thread.continued">), textIndent);
        return;
      case "handoff.deferred": {
        const deferred = data as EventData<"handoff.deferred">;
        if (full) {
          this.note(
            `context handoff put off (no summary yet); tried again at step ${deferred.retry_at_step}`,
            indent,
          );
        }
        return;
      }
      case "run.completed": {
        const run = data as EventData<"run.completed">;
        // A run that goes on in a continuation thread is one run to the reader.
        if (run.status === "completed" || run.status === "continued") return;
        const paint = run.status === "failed" ? style.red : style.yellow;
        const why = run.error ? `: ${run.error.message}` : "";
        this.note(`run ${run.status}${why}`, indent, paint);
        return;
      }
      default:
        if (full && event.type.startsWith("action.")) this.action(event, indent);
    }
  }

  /** Ends a line left open by streaming text; call before stopping. */
  finish(): void {
    this.endLine();
  }

  private action(event: SpoolEvent, indent: string): void {
    const { style } = this.options;
    const data = event.data as { action_id: string } & Record<string, unknown>;
    const key = `${event.stream.kind}:${event.stream.id}#${data.action_id}`;
    const name = this.actions.get(key) ?? data.action_id;
    switch (event.type) {
      case "action.dispatched": {
        const action = data as unknown as EventData<"action.dispatched">;
        this.actions.set(key, action.name);
        const parameters = JSON.stringify(action.parameters) ?? "";
        this.entry(style.cyan("▸"), `${action.type} ${action.name} ${parameters}`, indent);
        return;
      }
      case "action.succeeded": {
        const { duration_ms } = data as unknown as EventData<"action.succeeded">;
        this.entry(style.green("✓"), `${name} ${Math.round(duration_ms)} ms`, indent);
        return;
      }
      case "action.failed": {
        const { error } = data as unknown as EventData<"action.failed">;
        this.entry(style.red("✗"), `${name} — ${error.message}`, indent);
        return;
      }
      case "action.timed-out": {
        const timeout = data as unknown as EventData<"action.timed-out">;
        const text = `${name} — timed out after ${count(timeout.timeout_ms)} ms`;
        if (timeout.will_retry) this.entry(style.yellow("↻"), `${text}, retrying`, indent);
        else this.entry(style.red("✗"), text, indent);
        return;
      }
      case "action.retrying": {
        const retry = data as unknown as EventData<"action.retrying">;
        const text = `${name} retrying in ${count(retry.delay_ms)} ms — ${retry.error.message}`;
        this.entry(style.yellow("↻"), text, indent);
        return;
      }
      case "action.skipped": {
        const skipped = data as unknown as EventData<"action.skipped">;
        this.entry(style.yellow("↷"), `skipped: ${skipped.reason} — ${skipped.message}`, indent);
        return;
      }
      case "action.cancelled": {
        const { reason } = data as unknown as EventData<"action.cancelled">;
        this.entry(style.red("✗"), `${name} — cancelled: ${reason}`, indent);
        return;
      }
      case "action.interrupted": {
        const interrupted = data as unknown as EventData<"action.interrupted">;
        const rerun = interrupted.rerun ? "re-run" : "not re-run";
        this.entry(style.yellow("⚠"), `${interrupted.name} interrupted (${rerun})`, indent);
        return;
      }
    }
  }

  /** A quiet one-line note (dim unless `paint` says otherwise), cut to the width. */
  private note(text: string, indent: string, paint = this.options.style.dim): void {
    const room = Math.max(10, this.options.width - indent.length);
    this.line(paint(truncate(oneLine(text), room)), indent);
  }

  /** A one-line entry: a coloured glyph and text cut to the width. */
  private entry(glyph: string, text: string, indent: string): void {
    const room = Math.max(10, this.options.width - indent.length - 2);
    this.line(`${glyph} ${truncate(oneLine(text), room)}`, indent);
  }

  private step(stream: string, indent: string): StepView {
    let step = this.steps.get(stream);
    if (!step) {
      step = {
        parser: createProtocolParser(),
        streamed: "",
        ended: false,
        indent,
        held: new Map(),
      };
      this.steps.set(stream, step);
    }
    return step;
  }

  private endStepIfOpen(stream: string): void {
    const step = this.steps.get(stream);
    if (step && !step.ended) this.endStep(stream, step);
  }

  /** Shows the step's held response text, its `$references` substituted as the chat did. */
  private release(stream: string): void {
    const step = this.steps.get(stream);
    if (!step || step.held.size === 0) return;
    for (const [key, text] of step.held) {
      this.streamMarkdown(key, this.variables.substitute(stream, text), step.indent);
    }
    step.held.clear();
    if (this.streamKey?.startsWith(`${stream}/`)) this.endLine();
  }

  private endStep(stream: string, step: StepView): void {
    step.ended = true;
    this.parsed(stream, step, step.parser.end());
    // A response waiting for its `$references` goes on where it stopped once they are known.
    const key = this.streamKey;
    if (key?.startsWith(`${stream}/`) && !step.held.has(key)) this.endLine();
  }

  private parsed(stream: string, step: StepView, events: readonly ProtocolEvent[]): void {
    for (const event of events) {
      if (event.type === "block-end") {
        const key = `${stream}/${event.block}`;
        if (this.streamKey === key && !step.held.has(key)) this.endLine();
      } else if (event.type === "block-delta" && event.kind === "thought") {
        if (this.options.detail === "messages") continue;
        this.stream(`${stream}/${event.block}`, event.text, this.options.style.dim, step.indent);
      } else if (event.type === "block-delta" && event.kind !== "feed") {
        const key = `${stream}/${event.block}`;
        const held = step.held.get(key);
        const dollar = event.kind === "response" ? event.text.indexOf("$") : -1;
        if (held !== undefined) step.held.set(key, held + event.text);
        else if (dollar < 0) this.streamMarkdown(key, event.text, step.indent);
        else {
          if (dollar > 0) this.streamMarkdown(key, event.text.slice(0, dollar), step.indent);
          step.held.set(key, event.text.slice(dollar));
        }
      }
    }
  }

  /** Streams block text: leading whitespace of the block and trailing whitespace are dropped. */
  private stream(key: string, text: string, paint: (text: string) => string, indent: string) {
    if (this.streamKey !== key) {
      this.endLine();
      this.streamKey = key;
      this.blockHasText = false;
    }
    let chunk = this.pending + cleanText(text);
    if (!this.blockHasText) chunk = chunk.replace(/^\s+/, "");
    const body = chunk.replace(/\s+$/, "");
    this.pending = chunk.slice(body.length);
    if (body === "") return;
    this.blockHasText = true;
    this.writeIndented(body, indent, paint);
  }

  /**
   * Streams response text through the chat's markdown renderer (the same rendering a live chat
   * shows), each of its lines indented by `indent`.
   */
  private streamMarkdown(key: string, text: string, indent: string): void {
    if (this.streamKey !== key || !this.markdown) {
      this.endLine();
      this.streamKey = key;
      const { style, width } = this.options;
      this.markdown = createMarkdownStream({
        style,
        width: Math.max(20, width - indent.length),
        write: (chunk) => this.writeIndented(chunk, indent),
      });
    }
    this.markdown.push(text);
  }

  /** Writes text, `indent` before each line that has something on it, each line `paint`ed. */
  private writeIndented(
    chunk: string,
    indent: string,
    paint: (text: string) => string = (text) => text,
  ): void {
    const { write } = this.options;
    chunk.split("\n").forEach((piece, index) => {
      if (index > 0) {
        write("\n");
        this.atLineStart = true;
      }
      if (piece === "") return;
      if (this.atLineStart) write(indent);
      this.atLineStart = false;
      write(paint(piece));
    });
  }

  private line(text: string, indent: string): void {
    this.endLine();
    this.options.write(`${indent}${text}\n`);
  }

  private endLine(): void {
    const markdown = this.markdown;
    this.markdown = undefined;
    markdown?.end();
    if (!this.atLineStart) this.options.write("\n");
    this.atLineStart = true;
    this.streamKey = undefined;
    this.pending = "";
  }

  /** True for events of a hidden thread or of one of its steps. */
  private isHidden(stream: string): boolean {
    // A feed's source reads (`feed@<id>`) are the feed engine's, not the model's actions.
    if (isFeedSourceStream(stream)) return true;
    const { thread } = parseStepStreamId(stream);
    if (this.hidden.has(stream) || this.hidden.has(thread)) return true;
    if (this.depths.has(stream) || this.depths.has(thread)) return false;
    // A thread whose `thread.started` this view did not see (it starts mid-log): by its id.
    return isBackgroundThread(stream) || isBackgroundThread(thread);
  }

  /** Two spaces per level of child thread, for events on a thread or one of its steps. */
  private indentOf(stream: string): string {
    const depth = this.depths.get(stream) ?? this.depths.get(parseStepStreamId(stream).thread);
    return INDENT.repeat(depth ?? 0);
  }
}

/**
 * `── context handed off to a new thread (pressure 0.91, 7,402 → 2,310 tokens, summary 812
 * tokens) ──`; a last-resort handoff says it carried trailing messages only.
 */
export function handoffText(data: EventData<"thread.continued">): string {
  const details: string[] = [];
  if (data.pressure_ratio !== undefined) details.push(`pressure ${data.pressure_ratio.toFixed(2)}`);
  if (data.tokens_before !== undefined && data.tokens_after !== undefined) {
    details.push(`${count(data.tokens_before)} → ${count(data.tokens_after)} tokens`);
  }
  if (data.summary_tokens !== undefined)
    details.push(`summary ${count(data.summary_tokens)} tokens`);
  else if (data.mode === "trailing-only") details.push("no summary: recent messages only");
  if (details.length === 0) details.push(data.reason);
  return `── context handed off to a new thread (${details.join(", ")}) ──`;
}

/** `1,204`: a whole number with thousands separators. */
function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text safe to write to a terminal: newlines and tabs kept, other control characters removed. */
function cleanText(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(UNSAFE, "");
}
