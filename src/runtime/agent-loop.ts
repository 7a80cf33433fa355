import { createVariableStore } from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import { emptyUsage } from "../providers/assembled-message.js";
import { toUsageData } from "../providers/message-data.js";
import { costOf, type ModelCatalogue, pressureRatio } from "../providers/models/index.js";
import type { Provider } from "../providers/provider.js";
import type { Usage } from "../providers/stream-part.js";
import type { TokenEstimator } from "../providers/tokens/index.js";
import type { EventData } from "../spec/index.js";
import type { CheckpointSigner } from "../transcript/signing.js";
import { type AgentStepResult, type ExecutorFactory, notify, runAgentStep } from "./agent-step.js";
import type { NativeTools } from "./native-tools.js";
import { compileRecentWindow } from "./recent-window.js";
import type { RunLimitName, RunObserver, RunTotals } from "./run-notice.js";
import type { ThreadHistory } from "./thread-history.js";

/** The limits of a run; each is optional. */
export interface RunLimits {
  /** Model calls (steps) in one run. */
  maxTurns?: number;
  /** Input plus output tokens over the run. */
  maxTokens?: number;
  /** USD over the run, from the model catalogue's prices. */
  maxSpendUsd?: number;
  /** Wall-clock milliseconds of one run. */
  maxWallMs?: number;
  /** How deep `agent` actions may nest child threads. */
  maxSpawnDepth?: number;
}

/** Everything a run of one thread needs. */
export interface ThreadRunOptions {
  store: EventStore;
  continuity: string;
  thread: string;
  directive: string;
  model: string;
  provider: Provider;
  system: string;
  history: ThreadHistory;
  executors: ExecutorFactory;
  limits: RunLimits;
  catalogue: ModelCatalogue;
  estimator: TokenEstimator;
  /** The index of the thread's next step. */
  nextStep: number;
  turn?: string;
  /** A child thread's task: its first message. */
  input?: string;
  resumed?: boolean;
  signer?: CheckpointSigner;
  observer?: RunObserver;
  signal?: AbortSignal;
  /** Milliseconds for the wall-time limit (default `performance.now`). */
  now?: () => number;
  random?: () => number;
  /** Tools offered natively to the provider, and the way back from their native names. */
  nativeTools?: NativeTools;
  /** Output tokens reserved from the window (default: the model's output limit, at most 8192). */
  reserveOutputTokens?: number;
}

/** How a run ended. */
export interface ThreadRunResult {
  thread: string;
  status: EventData<"run.completed">["status"];
  steps: number;
  nextStep: number;
  result?: string;
  error?: { code: string; message: string };
  totals: RunTotals;
}

/**
 * Runs a thread until its work is done: each step compiles the recent window of the thread,
 * streams the model, runs its actions as they close, and logs `loop.decided`. The loop goes on
 * while the model says `<response final="false">`, ran actions without a final response, made
 * native tool calls, or broke the protocol; it ends on a final response, on a provider failure,
 * on cancellation, or on a limit (`limit.reached`). Every run starts with `run.started` and ends
 * with `run.completed`.
 */
export async function runThreadLoop(options: ThreadRunOptions): Promise<ThreadRunResult> {
  const { store, continuity, thread, observer } = options;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const info = options.catalogue.lookup(options.model);
  const reserve = options.reserveOutputTokens ?? Math.min(info?.maxOutputTokens ?? 4096, 8192);
  const budget = Math.max(1024, (info?.contextWindow ?? 128_000) - reserve);
  const usage: Usage = emptyUsage();
  const totals: RunTotals = { steps: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, actions: 0 };
  const threadStream = { kind: "thread" as const, id: thread };
  let index = options.nextStep;

  await store.append({
    continuity,
    stream: threadStream,
    type: "run.started",
    data: {
      ...(options.turn ? { turn: options.turn } : {}),
      ...(options.input !== undefined ? { input: options.input } : {}),
      resumed: options.resumed ?? false,
      directive: options.directive,
      model: options.model,
      next_step: index,
    },
  });
  notify(observer, {
    type: "run-started",
    continuity,
    thread,
    ...(options.turn ? { turn: options.turn } : {}),
    resumed: options.resumed ?? false,
  });

  const finish = async (
    status: ThreadRunResult["status"],
    extra: { result?: string; error?: { code: string; message: string } } = {},
  ): Promise<ThreadRunResult> => {
    await store.append({
      continuity,
      stream: threadStream,
      type: "run.completed",
      data: {
        ...(options.turn ? { turn: options.turn } : {}),
        status,
        steps: totals.steps,
        ...extra,
        usage: toUsageData(usage),
        cost_usd: totals.costUsd,
      },
    });
    notify(observer, { type: "run-ended", thread, status, ...extra, totals: { ...totals } });
    return { thread, status, steps: totals.steps, nextStep: index, ...extra, totals };
  };
  const limitReached = async (limit: RunLimitName, value: number, max: number) => {
    await store.append({
      continuity,
      stream: threadStream,
      type: "limit.reached",
      data: { limit, value, max },
    });
    notify(observer, { type: "limit", limit, value, max });
  };

  while (true) {
    const wall = now() - started;
    if (options.limits.maxWallMs !== undefined && wall >= options.limits.maxWallMs) {
      await limitReached("wall_time", Math.round(wall), options.limits.maxWallMs);
      return finish("limit");
    }
    if (options.signal?.aborted) return finish("cancelled");
    await catchUp(store, continuity, options.history);
    const window = compileRecentWindow({
      model: options.model,
      system: options.system,
      history: options.history.messages(),
      budget,
      estimator: options.estimator,
      maxOutputTokens: reserve,
      ...(options.nativeTools ? { tools: options.nativeTools.specs } : {}),
    });
    const step = `${thread}:${index}`;
    await store.append({
      continuity,
      stream: { kind: "step", id: step },
      type: "context.compiled",
      data: window.decision,
    });
    notify(observer, {
      type: "step-started",
      step,
      index,
      model: options.model,
      provider: options.provider.name,
    });
    const outcome = await runAgentStep({
      store,
      continuity,
      thread,
      index,
      provider: options.provider,
      request: window.request,
      executors: options.executors,
      variables: createVariableStore({ initial: options.history.variables() }),
      ...(options.nativeTools ? { nativeNames: options.nativeTools.names } : {}),
      estimator: options.estimator,
      ...(options.signer ? { signer: options.signer } : {}),
      ...(observer ? { observer } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.random ? { random: options.random } : {}),
    });
    index += 1;
    totals.steps += 1;
    totals.actions += outcome.summary.actions.length;
    addUsage(usage, outcome.message.usage);
    totals.inputTokens = usage.inputTokens;
    totals.outputTokens = usage.outputTokens;
    const cost = info ? costOf(outcome.message.usage, info).total : undefined;
    if (cost !== undefined) totals.costUsd += cost;
    notify(observer, {
      type: "step-completed",
      step,
      usage: outcome.message.usage,
      ...(cost !== undefined ? { costUsd: cost } : {}),
      ...(info && outcome.message.usage.inputTokens > 0
        ? { pressure: pressureRatio(outcome.message.usage, info) }
        : {}),
      totals: { ...totals },
    });

    const decision = decide(outcome, options.signal);
    const limit =
      decision.decision === "continue"
        ? overLimit(options.limits, totals, index - options.nextStep, now() - started)
        : undefined;
    await store.append({
      continuity,
      stream: threadStream,
      type: "loop.decided",
      data: {
        step,
        decision: limit ? "limit" : decision.decision,
        reason: limit ? `${limit.limit} reached (${limit.value} of ${limit.max})` : decision.reason,
        results: outcome.summary.actions.length,
      },
    });
    if (limit) {
      await limitReached(limit.limit, limit.value, limit.max);
      return finish("limit");
    }
    switch (decision.decision) {
      case "complete":
        return finish("completed", { result: decision.result });
      case "cancel":
        return finish("cancelled");
      case "fail":
        return finish("failed", { error: decision.error! });
      case "continue":
        break;
    }
  }
}

interface Decision {
  decision: "continue" | "complete" | "fail" | "cancel";
  reason: string;
  result?: string;
  error?: { code: string; message: string };
}

/** What to do after a step. Pure: resume and replay take the same decision from the same step. */
export function decide(outcome: AgentStepResult, signal?: AbortSignal): Decision {
  const { message, summary } = outcome;
  if (signal?.aborted || summary.cancelled) {
    return { decision: "cancel", reason: "the step was cancelled" };
  }
  if (message.error) {
    return {
      decision: "fail",
      reason: `the model call failed: ${message.error.code}`,
      error: { code: message.error.code, message: message.error.message },
    };
  }
  if (outcome.nativeCalls > 0) {
    return { decision: "continue", reason: `${outcome.nativeCalls} tool call(s) to answer` };
  }
  if (outcome.responded && summary.final) {
    return { decision: "complete", reason: "final response", result: outcome.response };
  }
  if (summary.errors.length > 0) {
    return { decision: "continue", reason: `${summary.errors.length} protocol error(s) to fix` };
  }
  if (outcome.responded) {
    return { decision: "continue", reason: "non-final response" };
  }
  if (summary.actions.length > 0) {
    return { decision: "continue", reason: `${summary.actions.length} action result(s)` };
  }
  // A model that writes plain text without the protocol's tags has answered.
  return {
    decision: "complete",
    reason: outcome.plainText.trim() === "" ? "empty output" : "plain-text answer",
    result: outcome.plainText.trim(),
  };
}

function overLimit(
  limits: RunLimits,
  totals: RunTotals,
  steps: number,
  wallMs: number,
): { limit: RunLimitName; value: number; max: number } | undefined {
  if (limits.maxTurns !== undefined && steps >= limits.maxTurns) {
    return { limit: "max_turns", value: steps, max: limits.maxTurns };
  }
  const tokens = totals.inputTokens + totals.outputTokens;
  if (limits.maxTokens !== undefined && tokens >= limits.maxTokens) {
    return { limit: "max_tokens", value: tokens, max: limits.maxTokens };
  }
  if (limits.maxSpendUsd !== undefined && totals.costUsd >= limits.maxSpendUsd) {
    return { limit: "max_spend", value: totals.costUsd, max: limits.maxSpendUsd };
  }
  if (limits.maxWallMs !== undefined && wallMs >= limits.maxWallMs) {
    return { limit: "wall_time", value: Math.round(wallMs), max: limits.maxWallMs };
  }
  return undefined;
}

function addUsage(total: Usage, step: Usage): void {
  total.inputTokens += step.inputTokens;
  total.outputTokens += step.outputTokens;
  total.cacheReadTokens += step.cacheReadTokens;
  total.cacheWriteTokens += step.cacheWriteTokens;
  if (step.reasoningTokens !== undefined) {
    total.reasoningTokens = (total.reasoningTokens ?? 0) + step.reasoningTokens;
  }
}

/** Feeds the history every event of the continuity it has not seen yet. */
export async function catchUp(
  store: EventStore,
  continuity: string,
  history: ThreadHistory,
): Promise<void> {
  for await (const event of store.read({ continuity, after: history.lastSeq })) {
    history.apply(event);
  }
}
