import type { Usage } from "../providers/index.js";
import type { ContextBundle } from "./context-bundle.js";

/** What the continuity knows of one thread between its steps (the driver keeps one per thread). */
export interface ThreadPressureState {
  /** Handoff attempts made so far (a deferred handoff counts). */
  attempt: number;
  /** A deferred handoff is tried again from this step on, not before. */
  retryAtStep: number;
}

/** The state of a thread that has not handed off or deferred a handoff yet. */
export const INITIAL_PRESSURE_STATE: ThreadPressureState = { attempt: 0, retryAtStep: 0 };

/** A thread's context pressure after a step, as `context_window_pressure` reports it. */
export interface StepPressure {
  /** Input tokens the step used: the provider's report (cache reads and writes in), or the compile's count. */
  tokensUsed: number;
  /** Reported input over the model's window, or `tokensUsed` over it rounded to four places. */
  ratio: number;
  /** The window the ratio is of. */
  window: number;
  /** True when the provider reported no usage and the compile's count stands in. */
  estimated: boolean;
}

/**
 * The pressure of a step: the provider's reported input (with cache reads and writes) when it
 * reported one, else the compile's own count, over the model's `window` (resolved once per run:
 * `resolveModelWindow`). Before a step, with no usage yet, it is the compile's pressure.
 */
export function stepPressure(
  usage: Pick<Usage, "inputTokens" | "cacheReadTokens" | "cacheWriteTokens">,
  bundle: Pick<ContextBundle, "tokens">,
  window: number,
): StepPressure {
  const reported = usage.inputTokens > 0;
  const tokensUsed = reported
    ? usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
    : bundle.tokens;
  // As the provider reported it (unrounded), or the compile's estimate (rounded).
  const ratio = reported ? usage.inputTokens / window : round(tokensUsed / window);
  return { tokensUsed, ratio, window, estimated: !reported };
}

/** What the continuity does about a thread after one of its steps. */
export type StepDecision = { kind: "none" } | { kind: "handoff"; reason: string };

/** Everything `afterStepDecision` decides from: the step as the log records it. */
export interface AfterStepInput {
  pressure: StepPressure;
  bundle: Pick<ContextBundle, "omitted" | "overBudget">;
  /** The step index the thread goes on with (the step just taken is `nextStep - 1`). */
  nextStep: number;
  /** The loop's `loop.decided` decision. */
  decision: string;
  /** `continuation.trigger_threshold`. */
  trigger: number;
  /** Whether the thread may hand off at all (child threads may not). */
  mayHandOff: boolean;
  /** The provider refused the step as longer than the model's context window. */
  contextTooLong?: boolean;
}

/**
 * Whether a thread hands off after a step: a pure function of its state and the step, which the
 * driver carries out and logs (`handoff.started` names the reason), and replay runs again.
 *
 * A thread hands off once it has taken two steps of its own (a restart keeps the count), when its
 * pressure reached the trigger or its compile had to leave messages out, unless the step was
 * cancelled or stopped at a limit, and not before a deferred handoff's retry step. A step the
 * provider refused as too long for the window hands off at once, whatever the step count.
 */
export function afterStepDecision(state: ThreadPressureState, input: AfterStepInput): StepDecision {
  const { pressure, bundle, nextStep, decision, trigger } = input;
  if (input.contextTooLong && input.mayHandOff && decision !== "cancel" && decision !== "limit") {
    return {
      kind: "handoff",
      reason: "the provider answered that the context is longer than the model's window",
    };
  }
  const full = bundle.omitted > 0 || bundle.overBudget;
  const due =
    input.mayHandOff &&
    nextStep >= 2 &&
    nextStep >= state.retryAtStep &&
    (pressure.ratio >= trigger || full) &&
    decision !== "cancel" &&
    decision !== "limit";
  if (!due) return { kind: "none" };
  return {
    kind: "handoff",
    reason: full
      ? `the context window is full (${bundle.omitted} older messages no longer fit)`
      : `context pressure ${pressure.ratio.toFixed(2)} reached the trigger ${trigger}`,
  };
}

/**
 * Whether a thread hands off before a step: a compile that must leave messages out (or does not
 * fit) would lose them, so a thread that has taken a step hands off first.
 */
export function beforeStepDecision(input: {
  bundle: Pick<ContextBundle, "omitted" | "overBudget">;
  nextStep: number;
  mayHandOff: boolean;
}): StepDecision {
  const { bundle } = input;
  if (!input.mayHandOff || input.nextStep === 0 || (bundle.omitted === 0 && !bundle.overBudget)) {
    return { kind: "none" };
  }
  return {
    kind: "handoff",
    reason: `the context window is full (${bundle.omitted} older messages would not fit)`,
  };
}

/** The state after a handoff attempt: deferred to `retryAtStep`, or done (the state starts over). */
export function afterHandoffAttempt(
  state: ThreadPressureState,
  outcome: { kind: "deferred"; retryAtStep: number } | { kind: "done" },
): ThreadPressureState {
  return outcome.kind === "deferred"
    ? { attempt: state.attempt, retryAtStep: outcome.retryAtStep }
    : INITIAL_PRESSURE_STATE;
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
