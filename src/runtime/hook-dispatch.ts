import { type ActionOutcome, toJsonValue } from "../actions/index.js";
import {
  type HookEngine,
  type HookEventName,
  type HookFiring,
  type HookPayloads,
  isMapping,
} from "../hooks/index.js";
import type { EventStore } from "../log/index.js";
import {
  canonicalJson,
  describeError,
  type EventData,
  errorCodeOf,
  type SpoolEvent,
} from "../spec/index.js";

/** The runtime control verbs built-in hooks execute as tools; the run's loop answers them. */
export const CONTROL_TOOLS: ReadonlySet<string> = new Set([
  "spool.retry",
  "spool.fail",
  "spool.escalate",
]);

/** The action id a hook's tool runs under, in its own step stream (`<thread>@hook<n>`). */
export const HOOK_ACTION_ID = "hook";

/** A hook's tool, as `HookDispatcherOptions.runTool` runs it. */
export interface HookToolCall {
  /** The thread the hook fired for: its agent's permissions are the ones in force. */
  thread: string;
  /** The step stream of the action: `<thread>@hook<n>`. */
  step: string;
  actionId: string;
  name: string;
  params: Record<string, unknown>;
}

/** What `createHookDispatcher` needs. */
export interface HookDispatcherOptions {
  store: EventStore;
  continuity: string;
  hooks: HookEngine;
  /** Runs a directive a hook executes, in the background; resolves with its final response. */
  runDirective: (call: {
    id: string;
    thread: string;
    name: string;
    params: Record<string, unknown>;
  }) => Promise<string>;
  /**
   * Runs a hook's tool as an action of its own step through the scheduler the model's actions
   * go through (intent logged first, permission gate, serial side effects, replay interception):
   * the runtime passes `runSingleAction` over the agent's executors.
   */
  runTool: (call: HookToolCall) => Promise<ActionOutcome>;
}

/**
 * Fires hooks and runs what they name. Every firing is logged (`hook.fired`); a directive runs
 * as a background child thread and a tool as an action of its own step stream
 * `<thread>@hook<n>`, so the one action path logs it, checks it and serializes it. Their outcome
 * lands in the worker stream of the same id (`hook.completed` / `hook.failed`) and never stops
 * the run. Control verbs (`spool.*`) are logged and left to the caller, and a directive with
 * `mode: precompute` starts the caller's job instead.
 */
export interface HookDispatcher {
  /**
   * Evaluates `event` and runs each firing; resolves with the firings once each is started. `at`
   * is the logged time (ms since the epoch) of the event behind it, which hooks' rate limits are
   * measured on (the stream events pass their delivery turn's `ts`). `ready` is awaited before the
   * first firing runs (what it may read must be written), and not at all when none fires.
   */
  fire<E extends HookEventName>(
    event: E,
    payload: HookPayloads[E],
    thread: string,
    job?: () => void,
    at?: number,
    ready?: () => Promise<void>,
  ): Promise<HookFiring[]>;
  /** Resolves once no hook action runs in the background. */
  idle(): Promise<void>;
  /**
   * Learns from the log (at load, in order) which `<thread>@hook<n>` numbers are taken, so a
   * restarted process names its next hook action after them, which firings have no outcome, and
   * when each rate-limited stream hook fired: at the `ts` of the delivery turn (`turn.added` with
   * `sources`) before its `hook.fired`, since a delivery's hooks fire when its run starts, before
   * the next delivery can be appended.
   */
  observe(event: SpoolEvent): void;
  /**
   * The firings (by worker id) whose `hook.fired` named a worker and whose outcome the log lacks:
   * a crash cut them off. Meaningful after the log was observed from its start.
   */
  interrupted(): readonly string[];
  /**
   * Ends each interrupted firing: `action.interrupted` for a tool dispatched without an end,
   * then `hook.failed` with `hook.interrupted` in its worker stream. Nothing is run again: a
   * hook's tool may have had its effect.
   */
  recover(): Promise<void>;
}

const HOOK_STREAM = /@hook(\d+)$/;

/** The hook events a delivery turn's run fires (their rate limits run on the turn's time). */
const STREAM_EVENTS: ReadonlySet<string> = new Set([
  "stream_chunk_received",
  "stream_source_exhausted",
]);

/** Creates the hook dispatcher of one continuity (see `HookDispatcher`). */
export function createHookDispatcher(options: HookDispatcherOptions): HookDispatcher {
  const { store, continuity, hooks } = options;
  let numbered = 0;
  const running = new Set<Promise<unknown>>();
  const pending = new Map<string, PendingFiring>();
  /** The logged time of the latest delivery turn observed (what its stream hooks fired at). */
  let delivered: number | undefined;
  /** The seq of the last event observed: a lower one starts another read of the log. */
  let observed = 0;

  const execute = async (firing: HookFiring, thread: string, job?: () => void) => {
    const params = isMapping(firing.params) ? firing.params : {};
    const { item_type: type, item_id: id } = firing.action;
    const precompute = type === "directive" && job !== undefined && params.mode === "precompute";
    const runs = id !== "" && !precompute && !(type === "tool" && CONTROL_TOOLS.has(id));
    // Named before `hook.fired` is logged, so a restart finds the firings whose outcome is missing.
    const worker = runs ? `${thread}@hook${++numbered}` : undefined;
    const logged = await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "hook.fired",
      data: {
        hook: firing.hook,
        event: firing.event,
        layer: firing.layer,
        item_type: type,
        item_id: id || "(empty)",
        params: toJsonValue(params) as Record<string, unknown>,
        ...(worker !== undefined ? { worker } : {}),
      },
    });
    // A later read of the log (a resume) starts below it, so it counts its firings afresh.
    observed = Math.max(observed, logged.seq);
    const completed = (outcome: string, detail: string | undefined, stream: string) =>
      store.append({
        continuity,
        stream: { kind: stream === thread ? "thread" : "worker", id: stream },
        type: "hook.completed",
        data: { hook: firing.hook, event: firing.event, outcome, ...(detail ? { detail } : {}) },
      });
    const failed = (error: { code: string; message: string }, stream: string) =>
      store.append({
        continuity,
        stream: { kind: stream === thread ? "thread" : "worker", id: stream },
        type: "hook.failed",
        data: { hook: firing.hook, event: firing.event, error },
      });
    if (id === "") {
      return failed({ code: "hook.error", message: "the hook's item_id rendered empty" }, thread);
    }
    if (precompute) {
      job();
      return completed("precompute-started", `summary of ${thread} by ${id}`, thread);
    }
    if (worker === undefined) return;
    const reportTool = (outcome: ActionOutcome, stream: string) => {
      if (outcome.status === "succeeded") {
        const output = outcome.output ?? null;
        // Canonical: a replay that serves the logged output writes the same detail.
        const text = typeof output === "string" ? output : canonicalJson(output);
        return completed("completed", text.slice(0, 20_000), stream);
      }
      return failed(
        outcome.error ?? {
          code: `action.${outcome.reason ?? outcome.status}`,
          message: (outcome.message ?? `the hook's tool "${id}" ended ${outcome.status}`).slice(
            0,
            10_000,
          ),
        },
        stream,
      );
    };
    // Hook actions run beside the run: their outcome lands in a worker stream of its own.
    const settled =
      type === "directive"
        ? options.runDirective({ id: worker, thread, name: id, params }).then(
            (result) => completed("completed", result.slice(0, 20_000), worker),
            (error: unknown) =>
              failed(
                {
                  code: errorCodeOf(error, "hook.error"),
                  message: describeError(error).slice(0, 10_000),
                },
                worker,
              ),
          )
        : options
            .runTool({ thread, step: worker, actionId: HOOK_ACTION_ID, name: id, params })
            .then((outcome) => reportTool(outcome, worker));
    const tracked = settled.catch(() => undefined);
    running.add(tracked);
    void tracked.finally(() => running.delete(tracked));
  };

  return {
    async fire(event, payload, thread, job, at, ready) {
      const firings = hooks.evaluate(event, payload, thread, at);
      if (firings.length > 0) await ready?.();
      for (const firing of firings) await execute(firing, thread, job);
      return firings;
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    observe(event) {
      if (event.seq <= observed) {
        // The log is read again from its start (a resume): its firings are counted afresh.
        hooks.resetRates();
        delivered = undefined;
      }
      observed = event.seq;
      if (event.type === "turn.added") {
        if ((event.data as EventData<"turn.added">).sources) delivered = Date.parse(event.ts);
        return;
      }
      if (event.type === "hook.fired") {
        const data = event.data as EventData<"hook.fired">;
        if (STREAM_EVENTS.has(data.event) && delivered !== undefined) {
          hooks.remember(data.hook, delivered);
        }
        if (data.worker === undefined) return;
        numbered = Math.max(numbered, numberOf(data.worker));
        pending.set(data.worker, { hook: data.hook, event: data.event });
        return;
      }
      const { id } = event.stream;
      if (!HOOK_STREAM.test(id)) return;
      numbered = Math.max(numbered, numberOf(id));
      const firing = pending.get(id);
      if (!firing) return;
      if (event.type === "hook.completed" || event.type === "hook.failed") {
        pending.delete(id);
      } else if (event.stream.kind === "step" && event.type === "action.dispatched") {
        firing.dispatched = event.data as EventData<"action.dispatched">;
      } else if (event.stream.kind === "step" && (ENDS.has(event.type) || isFinalTimeout(event))) {
        delete firing.dispatched;
      }
    },
    interrupted: () => [...pending.keys()],
    async recover() {
      for (const [worker, firing] of pending) {
        if (firing.dispatched) {
          await store.append({
            continuity,
            stream: { kind: "step", id: worker },
            type: "action.interrupted",
            data: {
              action_id: firing.dispatched.action_id,
              name: firing.dispatched.name,
              dispatched: true,
              rerun: false,
              reason:
                "a restart cut this hook's action off after it was dispatched; it is not run again because it may have had its effect",
            },
          });
        }
        await store.append({
          continuity,
          stream: { kind: "worker", id: worker },
          type: "hook.failed",
          data: {
            hook: firing.hook,
            event: firing.event,
            error: {
              code: "hook.interrupted",
              message: firing.dispatched
                ? "a restart cut the hook's action off while it ran; it is not run again"
                : "a restart came before the hook's outcome was recorded; its action is not run again",
            },
          },
        });
        pending.delete(worker);
      }
    },
  };
}

/** A firing whose outcome the log lacks so far, and its action's intent while it has no end. */
interface PendingFiring {
  hook: string;
  event: string;
  dispatched?: EventData<"action.dispatched">;
}

function numberOf(worker: string): number {
  return Number(HOOK_STREAM.exec(worker)?.[1] ?? 0);
}

const ENDS = new Set([
  "action.succeeded",
  "action.failed",
  "action.skipped",
  "action.cancelled",
  "action.interrupted",
]);

function isFinalTimeout(event: SpoolEvent): boolean {
  return (
    event.type === "action.timed-out" &&
    (event.data as EventData<"action.timed-out">).will_retry === false
  );
}
