import type { SummarizerChoice, SummaryWorker, ThreadPressureState } from "../continuity/index.js";
import {
  afterHandoffAttempt,
  afterStepDecision,
  beforeStepDecision,
  handOff,
  INITIAL_PRESSURE_STATE,
  messageTokens,
  stepPressure,
} from "../continuity/index.js";
import type { ContinuationConfig } from "../directives/index.js";
import {
  type HookEngine,
  type HookEventName,
  type HookPayloads,
  isMapping,
} from "../hooks/index.js";
import type { EventStore } from "../log/index.js";
import type { TokenEstimator } from "../providers/index.js";
import { emptyUsage, MODEL_RETRY, modelRetryDelay } from "../providers/index.js";
import type { SpoolEvent } from "../spec/index.js";
import type { CheckpointSigner } from "../transcript/index.js";
import { parseStepStreamId } from "../transcript/index.js";
import type { LoopContinuity, PreStepReview, StepReview } from "./agent-loop-types.js";
import { createHookDispatcher, type HookDispatcherOptions } from "./hook-dispatch.js";
import { catchUp } from "./step-ahead.js";
import type { ThreadHistory } from "./thread-history.js";

/** Everything the continuity driver of one continuity needs. */
export interface ContinuityDriverOptions {
  store: EventStore;
  continuity: string;
  hooks: HookEngine;
  continuation: ContinuationConfig;
  /** The summarizer of a directive (`selectSummarizer` over the item space). */
  summarizerFor: (directive: string) => SummarizerChoice;
  worker: SummaryWorker;
  /** Runs a directive a hook executes, in the background; resolves with its final response. */
  runDirective: HookDispatcherOptions["runDirective"];
  /** Runs a hook's tool through the one action path (see `HookDispatcherOptions.runTool`). */
  runTool: HookDispatcherOptions["runTool"];
  estimator: TokenEstimator;
  signer?: CheckpointSigner;
  /** Waits (a retry's backoff); default a timer that an abort cuts short. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter of a step retry's backoff (`modelRetryDelay`), [0, 1); default `Math.random`. */
  random?: () => number;
  /**
   * Gives a continuation memory from other continuities (`memory.recalled`), with `query` (the
   * handoff's summary, else the newest user turn), before its first compile. Default none.
   */
  recall?: (thread: string, query: string) => Promise<void>;
  /** The thread ran on and was continued: the runtime updates what it knows. */
  continued: (from: string, to: string, history: ThreadHistory) => void;
}

/** What the driver needs of the thread whose run it serves. */
export interface DrivenThread {
  directive: string;
  model: string;
  agent?: string;
  /** The model's context window (`SessionWindows.describe`): pressure is measured against it. */
  window: number;
  /** Input tokens a request may use (window − reserved output). */
  budget: number;
  /** Whether the thread may hand off (the foreground thread may; child threads do not). */
  handoff: boolean;
}

/** The continuity module around a run: pressure, hooks, summaries and handoffs. */
export interface ContinuityDriver {
  /** The loop's side of the driver for a run of `thread`. */
  lifecycle(thread: DrivenThread): LoopContinuity;
  /** Resolves once no hook action runs in the background. */
  idle(): Promise<void>;
  /**
   * Fires a hook event outside a step (thread lifecycle, directive returns, source deliveries);
   * `at` is the logged time its rate limits are measured on (see `HookDispatcher.fire`).
   */
  fire<E extends HookEventName>(
    event: E,
    payload: HookPayloads[E],
    thread: string,
    at?: number,
  ): Promise<void>;
  /** Learns from the log, at load: hook action numbers taken, hook actions left open. */
  observe(event: SpoolEvent): void;
  /** Hook firings whose outcome the log lacks (a crash cut them off), by worker id. */
  interruptedHookActions(): readonly string[];
  /**
   * Ends each of `interruptedHookActions`: `action.interrupted` for a tool dispatched without an
   * end, then `hook.failed` (`hook.interrupted`). Nothing is run again.
   */
  recoverHookActions(): Promise<void>;
}

/** Creates the continuity driver of one continuity (see `ContinuityDriver`). */
export function createContinuityDriver(options: ContinuityDriverOptions): ContinuityDriver {
  const { store, continuity, hooks, worker } = options;
  /** Each thread's pressure state; the decisions from it are pure (`afterStepDecision`). */
  const handoffs = new Map<string, ThreadPressureState>();
  const random = options.random ?? Math.random;
  const dispatcher = createHookDispatcher({
    store,
    continuity,
    hooks,
    runDirective: options.runDirective,
    runTool: options.runTool,
  });
  const sleep =
    options.sleep ??
    ((ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      }));
  const fire = dispatcher.fire;

  return {
    idle: () => dispatcher.idle(),
    fire: async (event, payload, thread, at) => {
      await fire(event, payload, thread, undefined, at);
    },
    observe: (event) => dispatcher.observe(event),
    interruptedHookActions: () => dispatcher.interrupted(),
    recoverHookActions: () => dispatcher.recover(),
    lifecycle(driven): LoopContinuity {
      const { window } = driven;
      // The seed may take half the budget at most, and its summary half the seed.
      const budgets = (choice: SummarizerChoice) => {
        const ceiling = Math.min(choice.resumeCeilingTokens, Math.floor(driven.budget / 2));
        return {
          ceiling,
          maxSummaryTokens: Math.min(choice.maxSummaryTokens, Math.floor(ceiling / 2)),
        };
      };
      const cost = messageTokens(options.estimator, driven.model);
      const loop: LoopContinuity = {
        sleep,
        async onError(info) {
          const firings = await fire(
            "error",
            {
              error: info.error,
              thread: info.thread,
              step: parseStepStreamId(info.step).index,
              attempt: info.attempt,
            },
            info.thread,
          );
          const retry = firings.find((firing) => firing.action.item_id === "spool.retry");
          const fail = firings.find((firing) => firing.action.item_id === "spool.fail");
          if (retry && !fail) {
            const params = isMapping(retry.params) ? retry.params : {};
            // The one model retry policy: the transport never retried this (it came after the
            // first byte, or it would not be transient any more), so nothing multiplies it.
            const max = numberOr(params.max_attempts, MODEL_RETRY.maxAttempts);
            if (info.attempt < max) {
              const delayMs = modelRetryDelay(info.attempt, undefined, random);
              // The wait is not in the decision: its jitter is environment, as a timeout's is.
              const reason = `transient error ${info.error.code} after the first byte: retry ${info.attempt} of ${max - 1} (hook ${retry.hook})`;
              await store.append({
                continuity,
                stream: { kind: "thread", id: info.thread },
                type: "hook.completed",
                data: { hook: retry.hook, event: "error", outcome: "retry", detail: reason },
              });
              return { retry: true, delayMs, reason };
            }
          }
          for (const firing of [retry, fail].filter((item) => item !== undefined)) {
            await store.append({
              continuity,
              stream: { kind: "thread", id: info.thread },
              type: "hook.completed",
              data: { hook: firing.hook, event: "error", outcome: "fail" },
            });
          }
          return { retry: false };
        },
        async onLimit(info) {
          const firings = await fire("limit", { ...info }, info.thread);
          for (const firing of firings) {
            if (firing.action.item_id !== "spool.escalate") continue;
            await store.append({
              continuity,
              stream: { kind: "thread", id: info.thread },
              type: "hook.completed",
              data: {
                hook: firing.hook,
                event: "limit",
                outcome: "escalated",
                detail: `${info.limit} reached (${info.value} of ${info.max}): raise it in the directive's <limits> (or the agent manifest's limits), or send a message to go on`,
              },
            });
          }
        },
        async afterStep(review: StepReview) {
          const { thread, history, bundle } = review;
          // The step's own events (its answer, its results, `loop.decided`) come after the
          // compile the loop caught up for: a hook, a summary or a handoff from here must see
          // them, written. Only then: the pressure needs none of them.
          let settled: Promise<void> | undefined;
          const ready = () => {
            settled ??= (async () => {
              await review.ended;
              if (driven.handoff) await catchUp(store, continuity, history);
            })();
            return settled;
          };
          const fireAfter = <E extends HookEventName>(
            event: E,
            payload: HookPayloads[E],
            job?: () => void,
          ) => fire(event, payload, thread, job, undefined, ready);
          const pressure = stepPressure(review.usage, bundle, window);
          const { tokensUsed, ratio } = pressure;
          // The summarizer is chosen (item files read) only when a hook or a handoff needs it.
          let chosen: SummarizerChoice | undefined;
          const choice = () => {
            chosen ??= options.summarizerFor(driven.directive);
            return chosen;
          };
          await fireAfter("after_step", {
            thread,
            step: review.index,
            decision: review.decision,
            usage: {
              input_tokens: review.usage.inputTokens,
              output_tokens: review.usage.outputTokens,
            },
          });
          if (driven.handoff) {
            await fireAfter(
              "context_window_pressure",
              {
                tokens_used: tokensUsed,
                max_tokens: window,
                pressure_ratio: ratio,
                estimated: pressure.estimated,
                thread,
                directive: driven.directive,
                get summarizer() {
                  return choice().name;
                },
              },
              () => {
                const view = history.view();
                const { maxSummaryTokens } = budgets(choice());
                worker.precompute({
                  thread,
                  directive: driven.directive,
                  summarizer: choice().name,
                  maxSummaryTokens,
                  messages: view.messages,
                  chain: view.summaries,
                  ...(view.sourceModes ? { sourceModes: view.sourceModes } : {}),
                });
              },
            );
          }
          if (review.decision === "complete" || review.decision === "fail") {
            await fireAfter("after_complete", { thread, status: review.decision });
          }
          const decided = afterStepDecision(handoffs.get(thread) ?? INITIAL_PRESSURE_STATE, {
            pressure,
            bundle,
            nextStep: review.nextStep,
            decision: review.decision,
            trigger: options.continuation.triggerThreshold,
            mayHandOff: driven.handoff,
            contextTooLong: review.contextTooLong,
          });
          if (decided.kind === "none") return undefined;
          await ready();
          return handOffNow({
            ...review,
            tokensUsed,
            ratio,
            reason: decided.reason,
            refused: review.contextTooLong,
          });
        },
        async beforeStep(review) {
          const { bundle } = review;
          const decided = beforeStepDecision({
            bundle,
            nextStep: review.nextStep,
            mayHandOff: driven.handoff,
          });
          if (decided.kind === "none") return undefined;
          const { tokensUsed, ratio } = stepPressure(emptyUsage(), bundle, window);
          return handOffNow({ ...review, tokensUsed, ratio, reason: decided.reason });
        },
      };

      async function handOffNow(
        review: PreStepReview & {
          tokensUsed: number;
          ratio: number;
          reason: string;
          /** The provider refused the thread's context: it cannot go on as it is. */
          refused?: boolean;
        },
      ) {
        const { thread, history, bundle } = review;
        const before = handoffs.get(thread) ?? INITIAL_PRESSURE_STATE;
        const attempt = before.attempt + 1;
        const state = { attempt, retryAtStep: before.retryAtStep };
        handoffs.set(thread, state);
        const choice = options.summarizerFor(driven.directive);
        const { ceiling, maxSummaryTokens } = review.refused
          ? refusedBudgets(budgets(choice), bundle.parts)
          : budgets(choice);
        const result = await handOff({
          store,
          continuity,
          thread,
          directive: driven.directive,
          model: driven.model,
          ...(driven.agent !== undefined ? { agent: driven.agent } : {}),
          view: history.view(),
          pressure: { tokensUsed: review.tokensUsed, maxTokens: window, ratio: review.ratio },
          reason: review.reason,
          summarizer: { name: choice.name, maxSummaryTokens },
          ceiling,
          attempt,
          maxAttempts: 3,
          fits:
            !review.refused &&
            review.tokensUsed < driven.budget &&
            bundle.omitted === 0 &&
            !bundle.overBudget,
          nextStep: review.nextStep,
          worker,
          cost,
          responseId: review.responseId,
          ...(review.continues
            ? { run: { completed: review.runCompleted, started: review.runStarted } }
            : {}),
          ...(options.signer ? { signer: options.signer } : {}),
        });
        if (result.kind === "deferred") {
          handoffs.set(thread, afterHandoffAttempt(state, result));
          return undefined;
        }
        handoffs.delete(thread);
        hooks.reset(thread);
        if (options.recall) {
          const view = history.view();
          const turn = view.messages[view.newestTurn]?.message;
          const query =
            result.summary?.text ??
            (turn?.role === "user" && typeof turn.content === "string" ? turn.content : "");
          await options.recall(result.continuation, query);
        }
        const next = history.successor(result.continuation);
        options.continued(thread, result.continuation, next);
        await fire(
          "thread.started",
          { thread: result.continuation, directive: driven.directive, continuation_of: thread },
          result.continuation,
        );
        await fire(
          "thread.continued",
          {
            thread,
            directive: driven.directive,
            continuation: result.continuation,
            mode: result.mode,
          },
          thread,
        );
        return { thread: result.continuation, history: next, reason: review.reason };
      }
      return loop;
    },
  };
}

/**
 * The seed budgets of a handoff the provider forced by refusing the context as too long: the
 * window Spool measured against is larger than the server's, so the seed (summary and carried
 * messages) gets at most half of what the refused request's conversation took, and its summary
 * half of that.
 */
function refusedBudgets(
  normal: { ceiling: number; maxSummaryTokens: number },
  parts: { summaries: number; messages: number },
): { ceiling: number; maxSummaryTokens: number } {
  const ceiling = Math.min(normal.ceiling, Math.floor((parts.summaries + parts.messages) / 2));
  return { ceiling, maxSummaryTokens: Math.min(normal.maxSummaryTokens, Math.floor(ceiling / 2)) };
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}
