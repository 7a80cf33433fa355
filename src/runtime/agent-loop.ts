import { createVariableStore } from "../actions/index.js";
import {
  compileContext,
  inputTokenLimit,
  logInputCuts,
  messageTokens,
  planInputCuts,
  prepareBundle,
  textTokens,
} from "../continuity/index.js";
import { feedValueSource } from "../feeds/index.js";
import { isSeqMoved } from "../log/index.js";
import type { Usage } from "../providers/index.js";
import { costOf, cursorRotatedEvent, emptyUsage, toUsageData } from "../providers/index.js";
import type { EventData } from "../spec/index.js";
import { StartCarry, stepStreamId } from "../transcript/index.js";
import type { ThreadRunOptions, ThreadRunResult } from "./agent-loop-types.js";
import { type AgentStepResult, notify, runAgentStep } from "./agent-step.js";
import {
  addUsage,
  contextOverflowDecision,
  type Decision,
  decide,
  type LimitHit,
  loopDecided,
  overLimit,
  projectTotals,
} from "./loop-decision.js";
import type { RunLimitName, RunTotals } from "./run-notice.js";
import type { StepFeeds } from "./session-feeds.js";
import { catchUp, StepAhead } from "./step-ahead.js";
import { stepRequest } from "./step-cursor.js";
import type { ThreadHistory } from "./thread-history.js";

/**
 * Runs a thread until its work is done: each step compiles the thread's context (`compileContext`),
 * streams the model, runs its actions as they close, and logs `loop.decided`. The loop goes on
 * while the model says `<response final="false">`, ran actions without a final response, made
 * native tool calls, or broke the protocol; it ends on a final response, on a provider failure,
 * on cancellation, or on a limit (`limit.reached`). Every run starts with `run.started` and ends
 * with `run.completed`.
 */
export async function runThreadLoop(options: ThreadRunOptions): Promise<ThreadRunResult> {
  const { store, continuity, observer } = options;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const info = options.catalogue.lookup(options.model);
  const { window } = options;
  const reserve = options.reserveOutputTokens ?? Math.min(window.maxOutputTokens, 8192);
  const budget = Math.max(1024, window.contextWindow - reserve);
  const usage: Usage = emptyUsage();
  const totals: RunTotals = { steps: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, actions: 0 };
  let thread = options.thread;
  let history = options.history;
  let threadStream = { kind: "thread" as const, id: thread };
  let index = options.nextStep;
  let errorAttempt = 0;
  /** The last step was refused as too long for the window and retried in a continuation. */
  let overflowed = false;
  const known = options.knownArtifacts ?? new Set<string>();
  let lastResponseId: string | null = null;
  let feeds: StepFeeds | undefined;
  /**
   * The step is compiled again after its start was refused: its feeds stay as read and logged,
   * and the observer was told of it.
   */
  let retrying = false;
  const ahead = new StepAhead(store, continuity);
  /** A model call made before a start that was refused, for the step compiled again. */
  const carry = new StartCarry();
  const compile = () => {
    return compileContext(
      history.view(),
      {
        name: options.directive,
        system: options.system,
        ...(options.nativeTools ? { tools: options.nativeTools.specs } : {}),
      },
      {
        model: options.model,
        budget,
        maxOutputTokens: reserve,
        ...(options.summaryTokens !== undefined ? { summaryTokens: options.summaryTokens } : {}),
        ...(feeds ? { feeds: feeds.text } : {}),
      },
      options.estimator,
    );
  };
  const inputLimit = inputTokenLimit(budget);
  const inputCounts = {
    message: messageTokens(options.estimator, options.model),
    text: (text: string) => textTokens(options.estimator, options.model, text),
  };
  /** Cuts inputs too long for the context to artifacts: logged, then applied by the history. */
  const cutInputs = async () => {
    const plan = () =>
      planInputCuts(history.view(), inputLimit, inputCounts, (entry, id) =>
        history.whole(entry, id),
      );
    let cuts = plan();
    if (cuts.length === 0) return;
    // A cut names its message's seq: only a written one.
    if (ahead.ahead) {
      await ahead.settle(history);
      cuts = plan();
      if (cuts.length === 0) return;
    }
    await logInputCuts(store, continuity, thread, cuts);
    await catchUp(store, continuity, history);
  };
  const continuationRunStarted = (): EventData<"run.started"> => ({
    resumed: false,
    directive: options.directive,
    model: options.model,
    next_step: 0,
  });
  const switchTo = (next: { thread: string; history: ThreadHistory; reason: string }) => {
    notify(observer, { type: "handoff", from: thread, to: next.thread, reason: next.reason });
    thread = next.thread;
    history = next.history;
    threadStream = { kind: "thread", id: thread };
    index = 0;
  };

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
  const runData = (extra: {
    status: ThreadRunResult["status"];
    result?: string;
    error?: { code: string; message: string };
  }): EventData<"run.completed"> => ({
    ...(options.turn && thread === options.thread ? { turn: options.turn } : {}),
    status: extra.status,
    steps: totals.steps,
    ...(extra.result !== undefined ? { result: extra.result } : {}),
    ...(extra.error ? { error: extra.error } : {}),
    usage: toUsageData(usage),
    cost_usd: totals.costUsd,
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
    options.ending?.();
    await store.append({
      continuity,
      stream: threadStream,
      type: "run.completed",
      data: runData({ status, ...extra }),
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
    await options.lifecycle?.onLimit({ thread, limit, value, max });
  };

  // A call kept for a step that is never compiled again is aborted unseen.
  try {
    while (true) {
      const wall = now() - started;
      if (options.limits.maxWallMs !== undefined && wall >= options.limits.maxWallMs) {
        await limitReached("wall_time", Math.round(wall), options.limits.maxWallMs);
        return finish("limit");
      }
      if (options.signal?.aborted) return finish("cancelled");
      // The last step's end may still be queued: it is read ahead (see `StepAhead`).
      await ahead.catchUp(history);
      await cutInputs();
      // A handoff before the compile keeps these feeds: one read of the world per step.
      if (!retrying) {
        const feedsStep = stepStreamId(thread, index);
        feeds = await options.feeds?.(feedsStep);
        if (feeds !== undefined) {
          await store.append({
            continuity,
            stream: { kind: "step", id: feedsStep },
            type: "context.feeds",
            data: {
              text: feeds.text,
              ...(Object.keys(feeds.values).length > 0 ? { values: feeds.values } : {}),
            },
          });
        }
      }
      let bundle = compile();
      if (options.lifecycle && (bundle.omitted > 0 || bundle.overBudget)) {
        // A handoff logs the history's seqs: only written ones.
        if (ahead.ahead) {
          await ahead.settle(history);
          bundle = compile();
        }
        const next = await options.lifecycle.beforeStep({
          thread,
          history,
          bundle,
          nextStep: index,
          continues: true,
          runStarted: continuationRunStarted(),
          runCompleted: runData({ status: "continued" }),
          responseId: lastResponseId,
        });
        if (next) {
          switchTo(next);
          await catchUp(store, continuity, history);
          await cutInputs();
          bundle = compile();
        }
      }
      if (bundle.overBudget) {
        // Inputs are cut and full threads hand off before this: what is left is the fixed part.
        return finish("failed", {
          error: {
            code: "context.over-budget",
            message: `the context of ${thread} needs ${bundle.tokens} tokens, more than the ${budget} ${options.model} takes, even with every long input cut and nothing older than the newest turn: shorten the directive, its pinned items or its context feeds, or use a model with a larger window`,
          },
        });
      }
      const step = stepStreamId(thread, index);
      const record = prepareBundle(store.artifacts, bundle, known);
      // The system prompt's artifact (new prompts only) is stored before the `context.compiled`
      // that names it is appended, in one commit with the step's `step.started`.
      await record.stored;
      if (!retrying) {
        notify(observer, {
          type: "step-started",
          step,
          index,
          model: options.model,
          provider: options.provider.name,
        });
      }
      let early: { decision: Decision; limit: LimitHit | undefined } | undefined;
      const files = await options.files?.(thread);
      // OpenAI Responses continues from the thread's cursor when it can (only the new messages).
      const rotatedIn = thread;
      const call = stepRequest({
        bundle,
        messages: history.view().messages,
        cursor: history.cursor(),
        provider: options.provider,
        onRotate: (rotation) =>
          store.append(cursorRotatedEvent(continuity, rotatedIn, rotation, step)).then(() => {}),
      });
      const start = ahead.startOptions();
      let outcome: AgentStepResult;
      try {
        outcome = await runAgentStep({
          store,
          continuity,
          thread,
          index,
          provider: options.provider,
          request: call.request,
          preamble: [
            {
              continuity,
              stream: { kind: "step", id: step },
              type: "context.compiled",
              data: call.cursor ? { ...record.data, cursor: call.cursor } : record.data,
            },
          ],
          executors: options.executors,
          // `$id` of a feed holds still for the step; the thread's own variables shadow feeds.
          variables: createVariableStore({
            initial: history.variables(),
            ...(feeds ? { fallbacks: [feedValueSource(feeds.values)] } : {}),
          }),
          ...(options.nativeTools ? { nativeNames: options.nativeTools.names } : {}),
          estimator: options.estimator,
          ...(options.signer ? { signer: options.signer } : {}),
          ...(observer ? { observer } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.random ? { random: options.random } : {}),
          ...(options.tasks ? { tasks: options.tasks } : {}),
          ...(start ? { start } : {}),
          endLater: true,
          carry,
          // Decided as the step ends, and committed with its `step.completed` (a failed call waits
          // for the error hooks, which may retry it: decided after).
          conclude: (ended) => {
            const decision = decide(ended, options.signal);
            if (decision.decision === "fail" && ended.message.error && options.lifecycle) return;
            const projected = projectTotals(totals, usage, ended.message.usage, info);
            const limit =
              decision.decision === "continue"
                ? overLimit(options.limits, projected, projected.steps, now() - started)
                : undefined;
            early = { decision, limit };
            return [loopDecided(continuity, threadStream, step, decision, limit, ended)];
          },
          ...(files
            ? {
                transcript: files.transcript,
                knowledge: files.knowledge,
                threadStartSeq: files.startSeq,
              }
            : {}),
        });
      } catch (error) {
        if (!isSeqMoved(error)) throw error;
        // Something else was written before the last step's end: compile again from the log.
        await ahead.settle(history);
        retrying = true;
        continue;
      }
      retrying = false;
      ahead.stepEnded(outcome.ended);
      index += 1;
      totals.steps += 1;
      lastResponseId = outcome.message.responseId;
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
        ...(outcome.message.usage.inputTokens > 0
          ? { pressure: outcome.message.usage.inputTokens / window.contextWindow }
          : {}),
        totals: { ...totals },
      });

      let decision = early?.decision ?? decide(outcome, options.signal);
      // Only a step the run goes on from is not waited for: hooks, limits and the run's end
      // follow a written step.
      if (decision.decision !== "continue" || early?.limit) await ahead.written();
      let retryDelay = 0;
      // Too long for the window: the lifecycle hands the thread off (only it can), not the hooks.
      const overflow: Decision | undefined = options.lifecycle
        ? contextOverflowDecision(decision, outcome, overflowed)
        : undefined;
      overflowed = overflow !== undefined;
      if (overflow) {
        decision = overflow;
      } else if (decision.decision === "fail" && outcome.message.error && options.lifecycle) {
        errorAttempt += 1;
        const verdict = await options.lifecycle.onError({
          thread,
          step,
          attempt: errorAttempt,
          error: {
            code: outcome.message.error.code,
            message: outcome.message.error.message,
            transient: outcome.message.error.retryable === true,
          },
        });
        if (verdict.retry) {
          decision = { decision: "retry", reason: verdict.reason };
          retryDelay = verdict.delayMs;
        }
      } else if (decision.decision !== "fail") {
        errorAttempt = 0;
      }
      let limit = early?.limit;
      if (!outcome.concluded) {
        limit =
          decision.decision === "continue" || decision.decision === "retry"
            ? overLimit(options.limits, totals, totals.steps, now() - started)
            : undefined;
        await store.append(loopDecided(continuity, threadStream, step, decision, limit, outcome));
      }
      if (limit) {
        await limitReached(limit.limit, limit.value, limit.max);
        return finish("limit");
      }
      const continues = decision.decision === "continue" || decision.decision === "retry";
      let ended: ThreadRunResult | undefined;
      switch (decision.decision) {
        case "complete":
          ended = await finish("completed", { result: decision.result });
          break;
        case "cancel":
          return finish("cancelled");
        case "fail":
          ended = await finish("failed", { error: decision.error! });
          break;
        case "continue":
        case "retry":
          break;
      }
      if (options.lifecycle) {
        const next = await options.lifecycle.afterStep({
          thread,
          history,
          index: index - 1,
          step,
          bundle,
          usage: outcome.message.usage,
          decision: decision.decision,
          nextStep: index,
          continues,
          runStarted: continuationRunStarted(),
          runCompleted: runData({ status: "continued" }),
          responseId: outcome.message.responseId,
          contextTooLong: overflowed,
          ...(outcome.ended !== undefined ? { ended: outcome.ended } : {}),
        });
        if (next) switchTo(next);
      }
      if (ended)
        return { ...ended, nextStep: thread === ended.thread ? index : 0, thread: ended.thread };
      if (retryDelay > 0) await options.lifecycle?.sleep(retryDelay, options.signal);
    }
  } finally {
    carry.release();
  }
}
