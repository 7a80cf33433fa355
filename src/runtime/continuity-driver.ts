import type { AnyTool } from "../actions/index.js";
import { toJsonValue } from "../actions/index.js";
import { messageTokens } from "../continuity/context-compiler.js";
import { handOff } from "../continuity/handoff.js";
import type { SummarizerChoice } from "../continuity/summarizer-selection.js";
import type { SummaryWorker } from "../continuity/summary-worker.js";
import type { ContinuationConfig } from "../directives/index.js";
import {
  type HookEngine,
  type HookEventName,
  type HookFiring,
  type HookPayloads,
  isMapping,
} from "../hooks/index.js";
import type { EventStore } from "../log/index.js";
import type { ModelInfo } from "../providers/models/index.js";
import { pressureRatio } from "../providers/models/index.js";
import type { TokenEstimator } from "../providers/tokens/index.js";
import { describeError, errorCodeOf } from "../spec/index.js";
import type { CheckpointSigner } from "../transcript/signing.js";
import { parseStepStreamId } from "../transcript/thread-streams.js";
import { catchUp, type LoopContinuity, type PreStepReview, type StepReview } from "./agent-loop.js";
import type { ThreadHistory } from "./thread-history.js";

/** The runtime control verbs built-in hooks execute as tools. */
const CONTROL_TOOLS = new Set(["spool.retry", "spool.fail", "spool.escalate"]);

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
  runDirective: (call: {
    id: string;
    thread: string;
    name: string;
    params: Record<string, unknown>;
  }) => Promise<string>;
  /** A tool a hook may execute, by name. */
  tool: (name: string) => AnyTool | undefined;
  estimator: TokenEstimator;
  signer?: CheckpointSigner;
  /** Waits (a retry's backoff); default a timer that an abort cuts short. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The thread ran on and was continued: the runtime updates what it knows. */
  continued: (from: string, to: string, history: ThreadHistory) => void;
}

/** What the driver needs of the thread whose run it serves. */
export interface DrivenThread {
  directive: string;
  model: string;
  agent?: string;
  info?: ModelInfo;
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
  /** Fires a hook event outside a step (thread lifecycle, directive returns). */
  fire<E extends HookEventName>(event: E, payload: HookPayloads[E], thread: string): Promise<void>;
}

interface HandoffState {
  attempt: number;
  retryAtStep: number;
}

/** Creates the continuity driver of one continuity (see `ContinuityDriver`). */
export function createContinuityDriver(options: ContinuityDriverOptions): ContinuityDriver {
  const { store, continuity, hooks, worker } = options;
  const handoffs = new Map<string, HandoffState>();
  let background = 0;
  const running = new Set<Promise<unknown>>();
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

  /** Logs a firing, runs what it names (control verbs are answered by the caller). */
  const execute = async (firing: HookFiring, thread: string, job?: () => void) => {
    const params = isMapping(firing.params) ? firing.params : {};
    await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "hook.fired",
      data: {
        hook: firing.hook,
        event: firing.event,
        layer: firing.layer,
        item_type: firing.action.item_type,
        item_id: firing.action.item_id || "(empty)",
        params: toJsonValue(params) as Record<string, unknown>,
      },
    });
    const done = (outcome: string, detail?: string, stream = thread) =>
      store.append({
        continuity,
        stream: { kind: stream === thread ? "thread" : "worker", id: stream },
        type: "hook.completed",
        data: { hook: firing.hook, event: firing.event, outcome, ...(detail ? { detail } : {}) },
      });
    const failed = (error: unknown, stream = thread) =>
      store.append({
        continuity,
        stream: { kind: stream === thread ? "thread" : "worker", id: stream },
        type: "hook.failed",
        data: {
          hook: firing.hook,
          event: firing.event,
          error: { code: errorCodeOf(error, "hook.error"), message: describeError(error) },
        },
      });
    const { item_type: type, item_id: id } = firing.action;
    if (id === "") return failed(new Error("the hook's item_id rendered empty"));
    if (type === "tool" && CONTROL_TOOLS.has(id)) return;
    if (type === "directive" && job && params.mode === "precompute") {
      job();
      return done("precompute-started", `summary of ${thread} by ${id}`);
    }
    background += 1;
    const worker = `${thread}@hook${background}`;
    const run =
      type === "directive"
        ? options.runDirective({ id: worker, thread, name: id, params })
        : runTool(options.tool(id), id, params);
    // Hook actions run beside the run: their outcome lands in a worker stream of its own.
    const settled = run.then(
      (result) => done("completed", result.slice(0, 20_000), worker),
      (error) => failed(error, worker),
    );
    running.add(settled);
    void settled.finally(() => running.delete(settled));
  };

  const fire = async <E extends HookEventName>(
    event: E,
    payload: HookPayloads[E],
    thread: string,
    job?: () => void,
  ): Promise<HookFiring[]> => {
    const firings = hooks.evaluate(event, payload, thread);
    for (const firing of firings) await execute(firing, thread, job);
    return firings;
  };

  return {
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    fire: async (event, payload, thread) => {
      await fire(event, payload, thread);
    },
    lifecycle(driven): LoopContinuity {
      const window = driven.info?.contextWindow ?? 128_000;
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
            const max = numberOr(params.max_attempts, 3);
            if (info.attempt < max) {
              const delayMs = numberOr(params.delay_ms, 1000) * 2 ** (info.attempt - 1);
              const reason = `transient error ${info.error.code}: retry ${info.attempt} of ${max - 1} in ${delayMs} ms (hook ${retry.hook})`;
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
          // compile the loop caught up for: a summary or a handoff from here must see them.
          if (driven.handoff) await catchUp(store, continuity, history);
          const state = handoffs.get(thread) ?? { attempt: 0, retryAtStep: 0 };
          handoffs.set(thread, state);
          const reported = review.usage.inputTokens > 0;
          const tokensUsed = reported
            ? review.usage.inputTokens +
              review.usage.cacheReadTokens +
              review.usage.cacheWriteTokens
            : bundle.tokens;
          const ratio =
            reported && driven.info
              ? pressureRatio(review.usage, driven.info)
              : round(tokensUsed / window);
          // The summarizer is chosen (item files read) only when a hook or a handoff needs it.
          let chosen: SummarizerChoice | undefined;
          const choice = () => {
            chosen ??= options.summarizerFor(driven.directive);
            return chosen;
          };
          await fire(
            "after_step",
            {
              thread,
              step: review.index,
              decision: review.decision,
              usage: {
                input_tokens: review.usage.inputTokens,
                output_tokens: review.usage.outputTokens,
              },
            },
            thread,
          );
          if (driven.handoff) {
            await fire(
              "context_window_pressure",
              {
                tokens_used: tokensUsed,
                max_tokens: window,
                pressure_ratio: ratio,
                estimated: !reported,
                thread,
                directive: driven.directive,
                get summarizer() {
                  return choice().name;
                },
              },
              thread,
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
                });
              },
            );
          }
          if (review.decision === "complete" || review.decision === "fail") {
            await fire("after_complete", { thread, status: review.decision }, thread);
          }
          const full = bundle.omitted > 0 || bundle.overBudget;
          // A thread hands off once it has taken two steps of its own (a restart keeps the count).
          const due =
            review.nextStep >= 2 &&
            review.nextStep >= state.retryAtStep &&
            (ratio >= options.continuation.triggerThreshold || full) &&
            review.decision !== "cancel" &&
            review.decision !== "limit";
          if (!driven.handoff || !due) return undefined;
          return handOffNow({
            ...review,
            tokensUsed,
            ratio,
            reason: full
              ? `the context window is full (${bundle.omitted} older messages no longer fit)`
              : `context pressure ${ratio.toFixed(2)} reached the trigger ${options.continuation.triggerThreshold}`,
          });
        },
        async beforeStep(review) {
          const { bundle } = review;
          // A compile that must leave messages out would lose them: hand off first.
          if (
            !driven.handoff ||
            review.nextStep === 0 ||
            (bundle.omitted === 0 && !bundle.overBudget)
          ) {
            return undefined;
          }
          return handOffNow({
            ...review,
            tokensUsed: bundle.tokens,
            ratio: round(bundle.tokens / window),
            reason: `the context window is full (${bundle.omitted} older messages would not fit)`,
          });
        },
      };

      async function handOffNow(
        review: PreStepReview & { tokensUsed: number; ratio: number; reason: string },
      ) {
        const { thread, history, bundle } = review;
        const state = handoffs.get(thread) ?? { attempt: 0, retryAtStep: 0 };
        handoffs.set(thread, state);
        state.attempt += 1;
        const choice = options.summarizerFor(driven.directive);
        const { ceiling, maxSummaryTokens } = budgets(choice);
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
          attempt: state.attempt,
          maxAttempts: 3,
          fits: review.tokensUsed < driven.budget && bundle.omitted === 0 && !bundle.overBudget,
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
          state.retryAtStep = result.retryAtStep;
          return undefined;
        }
        handoffs.delete(thread);
        hooks.reset(thread);
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

async function runTool(tool: AnyTool | undefined, name: string, params: Record<string, unknown>) {
  if (!tool) throw new Error(`there is no tool "${name}" for this agent`);
  const output = await tool.execute(tool.parameters.parse(params), {
    actionId: `hook:${name}`,
    attempt: 1,
    signal: AbortSignal.timeout(60_000),
    progress: () => {},
  });
  return typeof output === "string" ? output : JSON.stringify(output);
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}
