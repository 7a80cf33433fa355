import type { ModelInfo, Usage } from "../providers/index.js";
import { costOf } from "../providers/index.js";
import type { NewEvent } from "../spec/index.js";
import type { AgentStepResult } from "./agent-step.js";
import type { RunLimitName, RunTotals } from "./run-notice.js";

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

/** What the loop decides after a step. */
export interface Decision {
  decision: "continue" | "complete" | "fail" | "cancel" | "retry";
  reason: string;
  result?: string;
  error?: { code: string; message: string };
}

/**
 * A step the provider refused as longer than the model's context window
 * (`provider.context-too-long`) is taken again, in a continuation: the caller's continuity
 * lifecycle hands the thread off after it. Not when the step before was refused so too (the
 * continuation did not fit either): then the run fails with the provider's error. Undefined for
 * any other step. Pure, as `decide` is.
 */
export function contextOverflowDecision(
  decision: Decision,
  outcome: AgentStepResult,
  previousOverflowed: boolean,
): Decision | undefined {
  if (decision.decision !== "fail" || previousOverflowed) return undefined;
  if (outcome.message.error?.code !== "provider.context-too-long") return undefined;
  return {
    decision: "retry",
    reason:
      "the provider answered that the request does not fit the model's context window: the thread hands off to a continuation",
  };
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

/** A limit a run reached: which, its value and its maximum. */
export type LimitHit = { limit: RunLimitName; value: number; max: number };

/** The `loop.decided` of `step`: the decision, or the limit that overrides it. */
export function loopDecided(
  continuity: string,
  stream: { kind: "thread"; id: string },
  step: string,
  decision: Decision,
  limit: LimitHit | undefined,
  outcome: AgentStepResult,
): NewEvent {
  return {
    continuity,
    stream,
    type: "loop.decided",
    data: {
      step,
      decision: limit ? "limit" : decision.decision,
      reason: limit ? `${limit.limit} reached (${limit.value} of ${limit.max})` : decision.reason,
      results: outcome.summary.actions.length,
    },
  };
}

/** The run's totals as they will be once `step` (its usage) is counted. */
export function projectTotals(
  totals: RunTotals,
  usage: Usage,
  step: Usage,
  info: ModelInfo | undefined,
): RunTotals {
  return {
    ...totals,
    steps: totals.steps + 1,
    inputTokens: usage.inputTokens + step.inputTokens,
    outputTokens: usage.outputTokens + step.outputTokens,
    costUsd: totals.costUsd + (info ? costOf(step, info).total : 0),
  };
}

/** The first limit of `limits` the run has reached, if any. */
export function overLimit(
  limits: RunLimits,
  totals: RunTotals,
  steps: number,
  wallMs: number,
): LimitHit | undefined {
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

/** Adds a step's usage to the run's. */
export function addUsage(total: Usage, step: Usage): void {
  total.inputTokens += step.inputTokens;
  total.outputTokens += step.outputTokens;
  total.cacheReadTokens += step.cacheReadTokens;
  total.cacheWriteTokens += step.cacheWriteTokens;
  if (step.reasoningTokens !== undefined) {
    total.reasoningTokens = (total.reasoningTokens ?? 0) + step.reasoningTokens;
  }
}
