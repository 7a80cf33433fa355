import { type AnyTool, toJsonValue } from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import { createProtocolParser } from "../protocol/index.js";
import { fromMessageData, messageText } from "../providers/index.js";
import {
  describeError,
  type EventData,
  SpoolError,
  type SpoolEvent,
  type StreamRef,
} from "../spec/index.js";
import { stepStreamId } from "../transcript/index.js";

/** What recovery found and did for an interrupted run. */
export interface Recovery {
  /** `continue`: run the next step with the results; `end`: the run had finished its work. */
  next: "continue" | "end";
  /** The index of the thread's next step. */
  nextStep: number;
  /** How the run ends when `next` is `end`. */
  status?: "completed" | "failed" | "cancelled" | "limit";
  /** Actions reported as interrupted, and those of them re-run. */
  interrupted: string[];
  rerun: string[];
}

/** What `recoverRun` needs. */
export interface RecoverOptions {
  store: EventStore;
  continuity: string;
  thread: string;
  /** The seq of the open run's `run.started`. */
  since: number;
  /** The thread's tools: an interrupted call of an idempotent one is run again. */
  tools: readonly AnyTool[];
  signal?: AbortSignal;
  /**
   * Runs an idempotent tool again (default: the tool itself). Replay passes its recorded result
   * here; the runtime passes the tool through its intercept.
   */
  execute?: (tool: AnyTool, call: RerunCall) => Promise<unknown>;
}

/** An interrupted call run again. */
export interface RerunCall {
  step: string;
  actionId: string;
  attempt: number;
  parameters: Record<string, unknown>;
  signal: AbortSignal;
}

interface StepFacts {
  index: number;
  modelDone: boolean;
  text?: string;
  decided?: EventData<"loop.decided">["decision"];
  /**
   * Actions by stream and id (a workflow's inner actions have their own step stream, where ids
   * may repeat the model's): dispatched data, and whether a terminal event followed.
   */
  actions: Map<
    string,
    {
      id: string;
      dispatched?: EventData<"action.dispatched">;
      ended: boolean;
      attempts: number;
      stream: StreamRef;
    }
  >;
  /** Any event of the action (a skip before dispatch counts). */
  seen: Set<string>;
}

const TERMINAL = new Set([
  "action.succeeded",
  "action.failed",
  "action.skipped",
  "action.cancelled",
  "action.interrupted",
]);
const DECIDED_STATUS = {
  complete: "completed",
  fail: "failed",
  cancel: "cancelled",
  limit: "limit",
} as const;

/**
 * Recovers a run a crash interrupted, from the log alone: the model is not called again for a
 * step whose message completed. In the run's last step, every action with a durable intent and
 * no result gets `action.interrupted` and is run again only when its tool declares itself
 * idempotent; actions the model wrote but the crash kept from being dispatched are reported as
 * interrupted and not run; a model call that the crash cut off gets `step.interrupted`. Then
 * `loop.decided` records what the run does next: continue with the results, or end as the step
 * had decided. Writes nothing for a run that ended cleanly between steps except what is missing.
 */
export async function recoverRun(options: RecoverOptions): Promise<Recovery> {
  const { store, continuity, thread } = options;
  const prefix = `${thread}:`;
  const steps = new Map<number, StepFacts>();
  // Where the open run began: a crash before its first step leaves no step to go on from, and
  // the run must then go on at the run's own first step, not at 0 (which would reuse the ids of
  // the thread's earlier steps).
  let firstStep = 0;
  for await (const event of store.read({ continuity, after: options.since - 1 })) {
    const id = event.stream.id;
    if (event.seq === options.since && event.type === "run.started") {
      firstStep = (event.data as EventData<"run.started">).next_step;
      continue;
    }
    if (event.stream.kind === "thread" && id === thread && event.type === "loop.decided") {
      const data = event.data as EventData<"loop.decided">;
      const facts = steps.get(Number(data.step.slice(prefix.length)));
      if (facts) facts.decided = data.decision;
      continue;
    }
    if ((event.stream.kind !== "step" && event.stream.kind !== "task") || !id.startsWith(prefix)) {
      continue;
    }
    const rest = id.slice(prefix.length);
    const index = Number(rest.split(":")[0]);
    if (!Number.isInteger(index)) continue;
    let facts = steps.get(index);
    if (!facts) {
      facts = { index, modelDone: false, actions: new Map(), seen: new Set() };
      steps.set(index, facts);
    }
    noteEvent(facts, event);
  }
  const last = [...steps.values()].sort((a, b) => a.index - b.index).at(-1);
  if (!last) return { next: "continue", nextStep: firstStep, interrupted: [], rerun: [] };
  const nextStep = last.index + 1;
  if (last.decided !== undefined) {
    return last.decided === "continue" || last.decided === "retry"
      ? { next: "continue", nextStep, interrupted: [], rerun: [] }
      : { next: "end", nextStep, status: DECIDED_STATUS[last.decided], interrupted: [], rerun: [] };
  }

  const interrupted: string[] = [];
  const rerun: string[] = [];
  const modelStep = stepStreamId(thread, last.index);
  for (const action of last.actions.values()) {
    if (action.ended || !action.dispatched) continue;
    const { stream, id: actionId } = action;
    // An inner action of a workflow (its own step stream) is closed but never run again: its
    // workflow is interrupted and not run again either, so nothing would take its result.
    const inner = stream.kind === "step" && stream.id !== modelStep;
    const tool =
      action.dispatched.type === "tool" && !inner
        ? options.tools.find((candidate) => candidate.name === action.dispatched!.name)
        : undefined;
    const again = tool?.idempotent === true;
    if (!inner) interrupted.push(actionId);
    await store.append({
      continuity,
      stream,
      type: "action.interrupted",
      data: {
        action_id: actionId,
        name: action.dispatched.name,
        dispatched: true,
        rerun: again,
        reason: again
          ? "a restart cut it off; its tool is idempotent, so it runs again"
          : "a restart cut it off after it was dispatched; it is not run again because it may have had its effect",
      },
    });
    if (again && tool) {
      rerun.push(actionId);
      await rerunTool(
        options,
        stream,
        tool,
        {
          step: modelStep,
          actionId,
          attempt: action.attempts + 1,
          parameters: action.dispatched.parameters,
          signal: options.signal ?? new AbortController().signal,
        },
        action.dispatched.output_key,
      );
    }
  }

  if (last.modelDone && last.text !== undefined) {
    const { final, responded, undispatched } = reparse(last.text);
    for (const action of undispatched) {
      if (last.seen.has(action.id)) continue;
      interrupted.push(action.id);
      await store.append({
        continuity,
        stream: { kind: "step", id: stepStreamId(thread, last.index) },
        type: "action.interrupted",
        data: {
          action_id: action.id,
          name: action.name,
          dispatched: false,
          rerun: false,
          reason:
            "a restart came before it was dispatched; nothing ran. Ask again if it is still needed",
        },
      });
    }
    // The model is told about anything that did not run to its end; a final answer that came
    // after such an action may not hold any more.
    const done = responded && final && interrupted.length === rerun.length;
    await decideRecovered(options, last.index, done ? "complete" : "continue", interrupted.length);
    return done
      ? { next: "end", nextStep, status: "completed", interrupted, rerun }
      : { next: "continue", nextStep, interrupted, rerun };
  }

  await store.append({
    continuity,
    stream: { kind: "step", id: stepStreamId(thread, last.index) },
    type: "step.interrupted",
    data: { reason: "a restart cut the model call off; it is not sent again" },
  });
  await decideRecovered(options, last.index, "continue", interrupted.length);
  return { next: "continue", nextStep, interrupted, rerun };
}

function noteEvent(facts: StepFacts, event: SpoolEvent): void {
  if (event.type === "message.completed") {
    facts.modelDone = true;
    facts.text = messageText(fromMessageData(event.data as EventData<"message.completed">));
    return;
  }
  if (!event.type.startsWith("action.")) return;
  const data = event.data as { action_id: string; attempt?: number };
  facts.seen.add(data.action_id);
  const key = `${event.stream.kind}/${event.stream.id}#${data.action_id}`;
  let action = facts.actions.get(key);
  if (!action) {
    action = { id: data.action_id, ended: false, attempts: 0, stream: event.stream };
    facts.actions.set(key, action);
  }
  if (event.type === "action.dispatched") {
    action.dispatched = event.data as EventData<"action.dispatched">;
    action.stream = event.stream;
  }
  if (data.attempt !== undefined) action.attempts = Math.max(action.attempts, data.attempt);
  if (TERMINAL.has(event.type)) action.ended = true;
  if (
    event.type === "action.timed-out" &&
    (event.data as { will_retry: boolean }).will_retry === false
  ) {
    action.ended = true;
  }
}

function reparse(text: string) {
  const parser = createProtocolParser();
  const events = [...parser.push(text), ...parser.end()];
  let final = false;
  let responded = false;
  const undispatched: { id: string; name: string }[] = [];
  for (const event of events) {
    if (event.type === "block-start" && event.kind === "response") {
      responded = true;
      final ||= event.final;
    }
    if (event.type === "action" && event.action.mode !== "fire_and_forget") {
      undispatched.push({ id: event.action.id, name: event.action.name });
    }
  }
  // Plain text without tags is an answer, as the loop treats it.
  if (!responded && undispatched.length === 0 && text.trim() !== "")
    return { final: true, responded: true, undispatched };
  return { final, responded, undispatched };
}

async function decideRecovered(
  options: RecoverOptions,
  index: number,
  decision: "continue" | "complete",
  results: number,
): Promise<void> {
  await options.store.append({
    continuity: options.continuity,
    stream: { kind: "thread", id: options.thread },
    type: "loop.decided",
    data: {
      step: stepStreamId(options.thread, index),
      decision,
      reason: `recovered after a restart: ${decision === "continue" ? "the results go to the model" : "the step had answered"}`,
      results,
    },
  });
}

async function rerunTool(
  options: RecoverOptions,
  stream: StreamRef,
  tool: AnyTool,
  call: RerunCall,
  outputKey: string | undefined,
): Promise<void> {
  const { store, continuity } = options;
  const { actionId, attempt } = call;
  await store.append({
    continuity,
    stream,
    type: "action.started",
    data: { action_id: actionId, attempt },
  });
  const started = performance.now();
  try {
    const output = options.execute
      ? await options.execute(tool, call)
      : await tool.execute(tool.parameters.parse(call.parameters), {
          actionId,
          attempt,
          signal: call.signal,
          progress: () => {},
        });
    const value = toJsonValue(output ?? null);
    // As the scheduler records a success: the output goes under the action's output_key too
    // (`variable.set`, in the same batch), so later steps of the thread see it as `$name`.
    await store.appendBatch([
      {
        continuity,
        stream,
        type: "action.succeeded",
        data: {
          action_id: actionId,
          attempt,
          output: value,
          duration_ms: performance.now() - started,
        },
      },
      ...(outputKey === undefined
        ? []
        : [
            {
              continuity,
              stream,
              type: "variable.set",
              data: { name: outputKey, value, by: "action" as const, action_id: actionId },
            },
          ]),
    ]);
  } catch (error) {
    await store.append({
      continuity,
      stream,
      type: "action.failed",
      data: {
        action_id: actionId,
        attempt,
        error: {
          code: error instanceof SpoolError ? error.code : "action.error",
          message: describeError(error).slice(0, 20_000),
          ...(error instanceof SpoolError ? { retryable: error.retryable } : {}),
        },
        duration_ms: performance.now() - started,
      },
    });
  }
}
