import { type EventOf, isEvent, type SpoolEvent } from "../spec/index.js";
import { ActionSpans } from "./action-spans.js";
import { ATTR, OPERATION } from "./attribute-names.js";
import { closeSpan, failSpan, type OpenSpan, openSpan, refOf, type SpanRef } from "./open-spans.js";
import { genAiProviderName } from "./provider-name.js";
import {
  runInputMessages,
  runOutputAttributes,
  type ThreadInfo,
  usageAttributes,
} from "./run-attributes.js";
import { outputMessages } from "./span-content.js";
import { spanIdOf, traceIdOf } from "./span-ids.js";
import type { SpanRecord } from "./span-record.js";
import { threadOfStream } from "./stream-threads.js";

/** Options of `TraceFold`. */
export interface TraceFoldOptions {
  continuity: string;
  /**
   * Put message content on spans (`gen_ai.input.messages`, `gen_ai.output.messages`, tool call
   * arguments and results). Default false: spans carry names, ids, models and counts only.
   */
  captureContent?: boolean;
}

/** An open run: its span and where its steps start. */
interface RunState {
  span: OpenSpan;
  thread: string;
  firstStep: number;
}

/** The status message of a span whose run has no end in the log. */
export const UNFINISHED =
  "the run did not finish: the log has no run.completed for it (the process stopped, or it is still running)";

/** How many ended runs per thread are remembered for the child threads they spawned. */
const RECENT_RUNS = 8;

/**
 * The one fold from log events to spans: `spool trace` feeds it a continuity's log, live export
 * the events of a running session; both get the same spans with the same ids and times.
 *
 * Spans (docs/telemetry.md): `invoke_agent {directive}` per run (a turn's runs share a trace),
 * `chat {model}` (client) per model call and `execute_tool {name}` per action as its children,
 * `handoff {directive}` per handoff, and child threads' runs (agents, summarizers) under the span
 * that spawned them. Every span carries `gen_ai.conversation.id` = the continuity.
 *
 * Contract: pure and synchronous; `push` returns the spans an event ended, `finish` closes what
 * is still open (a crashed run, or one still going) with an error status at the newest event of
 * its run. Events of runs whose `run.started` it never saw are ignored, not guessed at.
 */
export class TraceFold {
  readonly #continuity: string;
  readonly #content: boolean;
  readonly #threads = new Map<string, ThreadInfo>();
  readonly #runs = new Map<string, RunState>();
  readonly #recentRuns = new Map<string, { firstStep: number; ref: SpanRef }[]>();
  readonly #chats = new Map<string, OpenSpan>();
  readonly #actions: ActionSpans;
  readonly #handoffs = new Map<string, OpenSpan>();
  readonly #handoffRefs = new Map<string, SpanRef>();
  /** Runs that ended `continued` (handed off mid-run), by thread: the continuation goes on in them. */
  readonly #continued = new Map<string, SpanRef>();
  readonly #turnTexts = new Map<string, string>();
  /** `context.compiled` comes just before its step's `step.started`: held until then. */
  readonly #contexts = new Map<string, EventOf<"context.compiled">["data"]>();

  constructor(options: TraceFoldOptions) {
    this.#continuity = options.continuity;
    this.#content = options.captureContent ?? false;
    this.#actions = new ActionSpans(options.continuity, this.#content);
  }

  /** Records a thread's start (what `thread.started` says) without making a span. */
  learnThread(event: EventOf<"thread.started">): void {
    const { data } = event;
    this.#threads.set(event.stream.id, {
      directive: data.directive,
      chainRoot: data.chain_root,
      ...(data.continuation_of !== undefined ? { continuationOf: data.continuation_of } : {}),
      ...(data.parent !== undefined ? { parent: data.parent } : {}),
    });
  }

  /** Folds one event (in seq order); returns the spans it ended. */
  push(event: SpoolEvent): SpanRecord[] {
    if (event.continuity !== this.#continuity) return [];
    this.#touch(event);
    if (isEvent(event, "thread.started")) this.learnThread(event);
    else if (isEvent(event, "turn.added")) {
      if (this.#content) this.#turnTexts.set(event.id, event.data.text);
    } else if (isEvent(event, "run.started")) return this.#runStarted(event);
    else if (isEvent(event, "run.completed")) return this.#runCompleted(event);
    else if (isEvent(event, "recovery.started")) return this.#recovered(event);
    else if (isEvent(event, "handoff.started")) this.#handoffStarted(event);
    else if (isEvent(event, "handoff.deferred")) this.#handoffDeferred(event);
    else if (isEvent(event, "thread.continued")) return this.#handoffEnded(event);
    else if (event.type.startsWith("action."))
      return this.#actions.push(event, this.#runRefOf(event));
    else return this.#chatEvent(event);
    return [];
  }

  /** Closes every open span as unfinished (see `UNFINISHED`); returns them, children first. */
  finish(): SpanRecord[] {
    const ended = [...this.#actions.finishAll(UNFINISHED)];
    for (const span of this.#chats.values()) ended.push(this.#unfinished(span));
    for (const span of this.#handoffs.values()) ended.push(this.#unfinished(span));
    for (const run of this.#runs.values()) ended.push(this.#unfinished(run.span));
    this.#chats.clear();
    this.#handoffs.clear();
    this.#runs.clear();
    return ended;
  }

  #unfinished(span: OpenSpan): SpanRecord {
    failSpan(span, "spool.unfinished", UNFINISHED);
    return closeSpan(span, span.lastTime);
  }

  /** Moves the newest-event time of the run (and its open spans) the event belongs to. */
  #touch(event: SpoolEvent): void {
    const thread = threadOfStream(event.stream);
    const run = thread === undefined ? undefined : this.#runs.get(thread);
    if (run) run.span.lastTime = event.ts;
    if (event.stream.kind === "step") {
      const chat = this.#chats.get(event.stream.id);
      if (chat) chat.lastTime = event.ts;
    }
    if (thread !== undefined) {
      const handoff = this.#handoffs.get(thread);
      if (handoff) handoff.lastTime = event.ts;
      this.#actions.touch(thread, event.ts);
    }
  }

  #runRefOf(event: SpoolEvent): SpanRef | undefined {
    const thread = threadOfStream(event.stream);
    const run = thread === undefined ? undefined : this.#runs.get(thread);
    return run ? refOf(run.span.record) : undefined;
  }

  #runStarted(event: EventOf<"run.started">): SpanRecord[] {
    const thread = event.stream.id;
    const ended: SpanRecord[] = [];
    const previous = this.#runs.get(thread);
    if (previous) ended.push(...this.#endRunAsInterrupted(previous));
    const info = this.#threads.get(thread);
    const { traceId, parentSpanId, link } = this.#placeRun(event, info);
    const span = openSpan({
      name: `${OPERATION.invokeAgent} ${event.data.directive}`,
      kind: "internal",
      traceId,
      spanId: spanIdOf(this.#continuity, `run:${event.id}`),
      ...(parentSpanId !== undefined ? { parentSpanId } : {}),
      startTime: event.ts,
      attributes: {
        [ATTR.operationName]: OPERATION.invokeAgent,
        [ATTR.agentName]: event.data.directive,
        [ATTR.agentId]: info?.chainRoot ?? thread,
        [ATTR.conversationId]: this.#continuity,
        [ATTR.requestModel]: event.data.model,
        [ATTR.threadId]: thread,
        [ATTR.runResumed]: event.data.resumed,
        ...(event.data.turn !== undefined ? { [ATTR.turnId]: event.data.turn } : {}),
      },
    });
    if (link) span.record.links.push(link);
    if (this.#content) {
      const input = runInputMessages(event, this.#turnTexts);
      if (input !== undefined) span.record.attributes[ATTR.inputMessages] = input;
    }
    this.#runs.set(thread, { span, thread, firstStep: event.data.next_step });
    return ended;
  }

  /**
   * The trace and parent of a run: under the action (or, for a summarizer, the run of the step)
   * that spawned its thread; in its turn's trace, under the handoff that continued its thread in
   * the same trace; else the root of its turn's trace (or of its own, without a turn).
   */
  #placeRun(
    event: EventOf<"run.started">,
    info: ThreadInfo | undefined,
  ): { traceId: string; parentSpanId?: string; link?: SpanRecord["links"][number] } {
    if (info?.parent) {
      const { thread, step, action } = info.parent;
      const ref = this.#actions.refOf(step, action) ?? this.#runOfStep(thread, step);
      if (ref) return { traceId: ref.traceId, parentSpanId: ref.spanId };
    }
    const traceId = traceIdOf(
      this.#continuity,
      event.data.turn !== undefined ? `turn:${event.data.turn}` : `run:${event.id}`,
    );
    if (info?.continuationOf === undefined) return { traceId };
    const key = `${info.continuationOf}>${event.stream.id}`;
    const handoff = this.#handoffRefs.get(key) ?? {
      traceId: traceIdOf(this.#continuity, `handoff:${key}`),
      spanId: spanIdOf(this.#continuity, `handoff:${key}`),
    };
    const link = { ...handoff, attributes: { "spool.link": "handoff" } };
    // A run handed off mid-run goes on here: in its trace, under the handoff (or the run).
    const continued = this.#continued.get(info.continuationOf);
    if (continued) {
      this.#continued.delete(info.continuationOf);
      const parentSpanId =
        handoff.traceId === continued.traceId ? handoff.spanId : continued.spanId;
      return { traceId: continued.traceId, parentSpanId, link };
    }
    if (handoff.traceId === traceId) return { traceId, parentSpanId: handoff.spanId, link };
    return { traceId, link };
  }

  /** The run of thread `thread` that step `step` (`<thread>:<index>`) was part of, if known. */
  #runOfStep(thread: string, step: string): SpanRef | undefined {
    const index = Number(step.slice(step.lastIndexOf(":") + 1));
    const open = this.#runs.get(thread);
    if (open && Number.isInteger(index) && index >= open.firstStep) return refOf(open.span.record);
    const recent = this.#recentRuns.get(thread) ?? [];
    for (let i = recent.length - 1; i >= 0; i--) {
      if (index >= recent[i]!.firstStep) return recent[i]!.ref;
    }
    return open ? refOf(open.span.record) : undefined;
  }

  #remember(run: RunState): void {
    const recent = this.#recentRuns.get(run.thread) ?? [];
    recent.push({ firstStep: run.firstStep, ref: refOf(run.span.record) });
    if (recent.length > RECENT_RUNS) recent.shift();
    this.#recentRuns.set(run.thread, recent);
    this.#runs.delete(run.thread);
  }

  #runCompleted(event: EventOf<"run.completed">): SpanRecord[] {
    const run = this.#runs.get(event.stream.id);
    if (!run) return [];
    const { data } = event;
    const attributes = run.span.record.attributes;
    attributes[ATTR.runStatus] = data.status;
    attributes[ATTR.runSteps] = data.steps;
    attributes[ATTR.costUsd] = data.cost_usd;
    Object.assign(attributes, usageAttributes(data.usage));
    if (this.#content) Object.assign(attributes, runOutputAttributes(data.result));
    if (data.status === "continued") this.#continued.set(run.thread, refOf(run.span.record));
    if (data.status === "failed") {
      const code = data.error?.code ?? "spool.run.failed";
      failSpan(run.span, code, data.error?.message ?? "the run failed");
    }
    this.#remember(run);
    return [closeSpan(run.span, event.ts)];
  }

  /** A run a crash cut off (recovery names its thread), or one a new run replaced. */
  #endRunAsInterrupted(run: RunState): SpanRecord[] {
    const message = "the run was interrupted: the process running it stopped before run.completed";
    const ended = this.#actions.finishThread(run.thread, message);
    for (const [step, chat] of this.#chats) {
      if (threadOfStream({ kind: "step", id: step }) !== run.thread) continue;
      failSpan(chat, "spool.interrupted", message);
      ended.push(closeSpan(chat, chat.lastTime));
      this.#chats.delete(step);
    }
    failSpan(run.span, "spool.interrupted", message);
    ended.push(closeSpan(run.span, run.span.lastTime));
    this.#remember(run);
    return ended;
  }

  #recovered(event: EventOf<"recovery.started">): SpanRecord[] {
    const ended: SpanRecord[] = [];
    for (const thread of event.data.open_runs) {
      const run = this.#runs.get(thread);
      if (run) ended.push(...this.#endRunAsInterrupted(run));
    }
    return ended;
  }

  #handoffStarted(event: EventOf<"handoff.started">): void {
    const thread = event.stream.id;
    if (this.#handoffs.has(thread)) return;
    const key = `${thread}>${event.data.continuation}`;
    const run = this.#runs.get(thread);
    const spanId = spanIdOf(this.#continuity, `handoff:${key}`);
    const traceId = run?.span.record.traceId ?? traceIdOf(this.#continuity, `handoff:${key}`);
    const directive =
      this.#threads.get(thread)?.directive ?? run?.span.record.attributes[ATTR.agentName];
    const span = openSpan({
      name: `handoff ${String(directive ?? thread)}`,
      kind: "internal",
      traceId,
      spanId,
      ...(run ? { parentSpanId: run.span.record.spanId } : {}),
      startTime: event.ts,
      attributes: {
        [ATTR.conversationId]: this.#continuity,
        [ATTR.threadId]: thread,
        [ATTR.handoffFrom]: thread,
        [ATTR.handoffContinuation]: event.data.continuation,
        [ATTR.handoffReason]: event.data.reason,
        [ATTR.handoffPressure]: event.data.pressure_ratio,
        [ATTR.handoffTokensBefore]: event.data.tokens_used,
      },
    });
    this.#handoffs.set(thread, span);
    this.#handoffRefs.set(key, { traceId, spanId });
  }

  #handoffDeferred(event: EventOf<"handoff.deferred">): void {
    const span = this.#handoffs.get(event.stream.id);
    span?.record.events.push({
      name: "spool.handoff.deferred",
      time: event.ts,
      attributes: {
        "spool.handoff.attempt": event.data.attempt,
        "spool.handoff.reason": event.data.reason,
      },
    });
  }

  #handoffEnded(event: EventOf<"thread.continued">): SpanRecord[] {
    const span = this.#handoffs.get(event.stream.id);
    if (!span) return [];
    const { data } = event;
    const attributes = span.record.attributes;
    if (data.mode !== undefined) attributes[ATTR.handoffMode] = data.mode;
    if (data.tokens_before !== undefined) attributes[ATTR.handoffTokensBefore] = data.tokens_before;
    if (data.tokens_after !== undefined) attributes[ATTR.handoffTokensAfter] = data.tokens_after;
    this.#handoffs.delete(event.stream.id);
    return [closeSpan(span, event.ts)];
  }

  /** Model calls: `step.started` … `step.completed` (or `step.interrupted`). */
  #chatEvent(event: SpoolEvent): SpanRecord[] {
    if (isEvent(event, "step.started")) {
      if (event.data.kind === "model") this.#chatStarted(event);
      return [];
    }
    if (isEvent(event, "context.compiled")) {
      if (this.#runRefOf(event)) this.#contexts.set(event.stream.id, event.data);
      return [];
    }
    const chat = event.stream.kind === "step" ? this.#chats.get(event.stream.id) : undefined;
    if (!chat) return [];
    const attributes = chat.record.attributes;
    if (isEvent(event, "message.completed")) {
      const { data } = event;
      const finish = data.provider_stop_reason ?? data.stop_reason;
      attributes[ATTR.responseModel] = data.model;
      if (data.response_id !== null) attributes[ATTR.responseId] = data.response_id;
      attributes[ATTR.finishReasons] = [finish];
      Object.assign(attributes, usageAttributes(data.usage));
      if (this.#content) attributes[ATTR.outputMessages] = outputMessages(data, finish);
    } else if (isEvent(event, "message.failed")) {
      failSpan(chat, event.data.error.code, event.data.error.message);
    } else if (isEvent(event, "provider.retrying")) {
      chat.record.events.push({
        name: "spool.provider.retry",
        time: event.ts,
        attributes: {
          "spool.retry.attempt": event.data.attempt,
          [ATTR.errorType]: event.data.error.code,
        },
      });
    } else if (isEvent(event, "step.completed")) {
      if (event.data.kind === "model" && attributes[ATTR.inputTokens] === undefined) {
        Object.assign(attributes, usageAttributes(event.data.usage));
      }
      this.#chats.delete(event.stream.id);
      return [closeSpan(chat, event.ts)];
    } else if (isEvent(event, "step.interrupted")) {
      failSpan(chat, "spool.interrupted", event.data.reason);
      this.#chats.delete(event.stream.id);
      return [closeSpan(chat, event.ts)];
    }
    return [];
  }

  #chatStarted(event: EventOf<"step.started">): void {
    if (event.data.kind !== "model") return;
    const run = this.#runs.get(event.data.thread);
    if (!run) return;
    const { model, provider } = event.data;
    const span = openSpan({
      name: `${OPERATION.chat} ${model}`,
      kind: "client",
      traceId: run.span.record.traceId,
      spanId: spanIdOf(this.#continuity, `chat:${event.id}`),
      parentSpanId: run.span.record.spanId,
      startTime: event.ts,
      attributes: {
        [ATTR.operationName]: OPERATION.chat,
        [ATTR.providerName]: genAiProviderName(provider),
        [ATTR.requestModel]: model,
        [ATTR.conversationId]: this.#continuity,
        [ATTR.threadId]: event.data.thread,
        [ATTR.stepId]: event.stream.id,
      },
    });
    const context = this.#contexts.get(event.stream.id);
    if (context) {
      span.record.attributes[ATTR.contextTokens] = context.tokens;
      span.record.attributes[ATTR.contextMessages] = context.messages;
      span.record.attributes[ATTR.contextOmitted] = context.omitted;
    }
    this.#contexts.clear();
    run.span.record.attributes[ATTR.providerName] = genAiProviderName(provider);
    this.#chats.set(event.stream.id, span);
  }
}
