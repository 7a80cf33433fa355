import { type EventOf, isEvent, type SpoolEvent } from "../spec/index.js";
import { ATTR, OPERATION } from "./attribute-names.js";
import { closeSpan, failSpan, type OpenSpan, openSpan, type SpanRef } from "./open-spans.js";
import { contentJson } from "./span-content.js";
import { spanIdOf } from "./span-ids.js";
import type { SpanRecord } from "./span-record.js";
import { stepOfStream, threadOfStream } from "./stream-threads.js";

/** How many ended actions are remembered for the child threads they spawned. */
const RECENT_ACTIONS = 256;

/** An open action span and the thread it runs in. */
interface ActionState {
  span: OpenSpan;
  thread: string;
}

/**
 * The `execute_tool {name}` spans of a continuity's actions, from `action.dispatched` to their
 * one terminal event (`succeeded`, `failed`, `timed-out` without a retry, `skipped`, `cancelled`,
 * `interrupted`), under the span of the run their step belongs to. Part of `TraceFold`.
 */
export class ActionSpans {
  readonly #continuity: string;
  readonly #content: boolean;
  /** Open actions by `<step>#<action id>`. */
  readonly #open = new Map<string, ActionState>();
  /** Ended actions' spans by the same key (newest last), for the threads they spawned. */
  readonly #ended = new Map<string, SpanRef>();

  constructor(continuity: string, captureContent: boolean) {
    this.#continuity = continuity;
    this.#content = captureContent;
  }

  /** The span of action `action` of step `step`, open or recently ended. */
  refOf(step: string, action: string): SpanRef | undefined {
    const key = `${step}#${action}`;
    const open = this.#open.get(key);
    if (open) return { traceId: open.span.record.traceId, spanId: open.span.record.spanId };
    return this.#ended.get(key);
  }

  /** Moves the newest-event time of the open actions of `thread`. */
  touch(thread: string, time: string): void {
    for (const state of this.#open.values())
      if (state.thread === thread) state.span.lastTime = time;
  }

  /** Folds one `action.*` event; `run` is the span of its thread's open run, if any. */
  push(event: SpoolEvent, run: SpanRef | undefined): SpanRecord[] {
    const step = stepOfStream(event.stream);
    const data = event.data as { action_id?: unknown };
    if (step === undefined || typeof data.action_id !== "string") return [];
    const key = `${step}#${data.action_id}`;
    if (isEvent(event, "action.dispatched")) {
      if (run) this.#dispatched(event, key, step, run);
      return [];
    }
    let state = this.#open.get(key);
    if (
      !state &&
      run &&
      (isEvent(event, "action.skipped") || isEvent(event, "action.interrupted"))
    ) {
      // Rejected or cut off before its dispatch: a span of no length says so.
      state = this.#start(event, key, step, run, data.action_id, undefined);
    }
    if (!state) return [];
    return this.#update(event, key, state);
  }

  /** Closes the open actions of `thread` with an error `message`. */
  finishThread(thread: string, message: string): SpanRecord[] {
    const ended: SpanRecord[] = [];
    for (const [key, state] of this.#open) {
      if (state.thread !== thread) continue;
      failSpan(state.span, "spool.interrupted", message);
      ended.push(this.#end(key, state, state.span.lastTime));
    }
    return ended;
  }

  /** Closes every open action as unfinished. */
  finishAll(message: string): SpanRecord[] {
    const ended: SpanRecord[] = [];
    for (const [key, state] of this.#open) {
      failSpan(state.span, "spool.unfinished", message);
      ended.push(this.#end(key, state, state.span.lastTime));
    }
    return ended;
  }

  #dispatched(event: EventOf<"action.dispatched">, key: string, step: string, run: SpanRef): void {
    const { data } = event;
    const state = this.#start(event, key, step, run, data.action_id, data.name);
    const attributes = state.span.record.attributes;
    attributes[ATTR.actionType] = data.type;
    attributes[ATTR.actionMode] = data.mode;
    if (this.#content) attributes[ATTR.toolCallArguments] = contentJson(data.parameters);
  }

  #start(
    event: SpoolEvent,
    key: string,
    step: string,
    run: SpanRef,
    actionId: string,
    name: string | undefined,
  ): ActionState {
    const thread = threadOfStream(event.stream) ?? step;
    const span = openSpan({
      name: `${OPERATION.executeTool} ${name ?? actionId}`,
      kind: "internal",
      traceId: run.traceId,
      spanId: spanIdOf(this.#continuity, `action:${event.id}`),
      parentSpanId: run.spanId,
      startTime: event.ts,
      attributes: {
        [ATTR.operationName]: OPERATION.executeTool,
        [ATTR.toolName]: name ?? actionId,
        [ATTR.toolCallId]: actionId,
        [ATTR.toolType]: "function",
        [ATTR.conversationId]: this.#continuity,
        [ATTR.threadId]: thread,
        [ATTR.stepId]: step,
      },
    });
    const state = { span, thread };
    this.#open.set(key, state);
    return state;
  }

  #update(event: SpoolEvent, key: string, state: ActionState): SpanRecord[] {
    const { span } = state;
    span.lastTime = event.ts;
    if (isEvent(event, "action.started")) {
      span.record.attributes[ATTR.actionAttempts] = event.data.attempt;
    } else if (isEvent(event, "action.retrying")) {
      span.record.events.push({
        name: "spool.action.retry",
        time: event.ts,
        attributes: {
          "spool.retry.attempt": event.data.attempt,
          [ATTR.errorType]: event.data.error.code,
        },
      });
    } else if (isEvent(event, "action.succeeded")) {
      if (this.#content)
        span.record.attributes[ATTR.toolCallResult] = contentJson(event.data.output);
      return [this.#end(key, state, event.ts)];
    } else if (isEvent(event, "action.failed")) {
      failSpan(span, event.data.error.code, event.data.error.message);
      return [this.#end(key, state, event.ts)];
    } else if (isEvent(event, "action.timed-out")) {
      if (event.data.will_retry) return [];
      failSpan(span, "timeout", `the action ran past its timeout of ${event.data.timeout_ms} ms`);
      return [this.#end(key, state, event.ts)];
    } else if (isEvent(event, "action.skipped")) {
      failSpan(span, `skipped.${event.data.reason}`, event.data.message);
      return [this.#end(key, state, event.ts)];
    } else if (isEvent(event, "action.cancelled")) {
      failSpan(span, "cancelled", event.data.reason);
      return [this.#end(key, state, event.ts)];
    } else if (isEvent(event, "action.interrupted")) {
      failSpan(span, "spool.interrupted", event.data.reason);
      return [this.#end(key, state, event.ts)];
    }
    return [];
  }

  #end(key: string, state: ActionState, time: string): SpanRecord {
    this.#open.delete(key);
    this.#ended.set(key, { traceId: state.span.record.traceId, spanId: state.span.record.spanId });
    if (this.#ended.size > RECENT_ACTIONS) {
      const oldest = this.#ended.keys().next().value;
      if (oldest !== undefined) this.#ended.delete(oldest);
    }
    return closeSpan(state.span, time);
  }
}
