import { createVariableStore } from "../actions/index.js";
import {
  type ContextBundle,
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
import { cursorRotatedEvent } from "../providers/index.js";
import { StartCarry, stepStreamId } from "../transcript/index.js";
import type { ThreadRunOptions, ThreadRunResult } from "./agent-loop-types.js";
import { type AgentStepResult, notify, runAgentStep } from "./agent-step.js";
import {
  contextOverflowDecision,
  type Decision,
  decide,
  type LimitHit,
  loopDecided,
  overLimit,
} from "./loop-decision.js";
import { type RunEnd, RunLedger } from "./run-ledger.js";
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
export function runThreadLoop(options: ThreadRunOptions): Promise<ThreadRunResult> {
  return new ThreadLoop(options).run();
}

/** A step the model took: its id, what it gave, and the decision made as it ended, if one was. */
interface TakenStep {
  step: string;
  bundle: ContextBundle;
  outcome: AgentStepResult;
  early: EarlyDecision | undefined;
}

/** The loop's decision made as a step ends, and its `loop.decided`, committed with the step. */
interface EarlyDecision {
  decision: Decision;
  limit: LimitHit | undefined;
  event: ReturnType<typeof loopDecided>;
}

/** What the loop does after a step: its decision, a limit it hit, and a retry's wait. */
interface StepVerdict {
  decision: Decision;
  limit: LimitHit | undefined;
  retryDelay: number;
}

/**
 * One run of a thread, step by step. Its state is the thread it is on (a handoff moves it to the
 * continuation), the next step's index, and the run's totals; `StepAhead` lets a step be compiled
 * from the last one's end while that is still being written, and `StartCarry` keeps a model call
 * made for a start that was refused.
 */
class ThreadLoop {
  readonly #options: ThreadRunOptions;
  readonly #now: () => number;
  readonly #started: number;
  readonly #reserve: number;
  readonly #budget: number;
  readonly #inputLimit: number;
  readonly #inputCounts: Parameters<typeof planInputCuts>[2];
  readonly #ledger: RunLedger;
  readonly #known: Set<string>;
  readonly #ahead: StepAhead;
  /** A model call made before a start that was refused, for the step compiled again. */
  readonly #carry = new StartCarry();
  #thread: string;
  #history: ThreadHistory;
  #index: number;
  #errorAttempt = 0;
  /** The last step was refused as too long for the window and retried in a continuation. */
  #overflowed = false;
  #lastResponseId: string | null = null;
  #feeds: StepFeeds | undefined;
  /**
   * The step is compiled again after its start was refused: its feeds stay as read and logged,
   * and the observer was told of it.
   */
  #retrying = false;

  constructor(options: ThreadRunOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#started = this.#now();
    this.#ledger = new RunLedger(options);
    const { window } = options;
    this.#reserve = options.reserveOutputTokens ?? Math.min(window.maxOutputTokens, 8192);
    this.#budget = Math.max(1024, window.contextWindow - this.#reserve);
    this.#inputLimit = inputTokenLimit(this.#budget);
    this.#inputCounts = {
      message: messageTokens(options.estimator, options.model),
      text: (text: string) => textTokens(options.estimator, options.model, text),
    };
    this.#known = options.knownArtifacts ?? new Set<string>();
    this.#ahead = new StepAhead(options.store, options.continuity);
    this.#thread = options.thread;
    this.#history = options.history;
    this.#index = options.nextStep;
  }

  /** Ends the run on the thread it is on now. */
  #end(status: ThreadRunResult["status"], extra?: RunEnd): Promise<ThreadRunResult> {
    return this.#ledger.finish(this.#thread, this.#index, status, extra);
  }

  get #threadStream() {
    return { kind: "thread" as const, id: this.#thread };
  }

  async run(): Promise<ThreadRunResult> {
    await this.#ledger.started(this.#thread, this.#index);
    // A call kept for a step that is never compiled again is aborted unseen.
    try {
      while (true) {
        const ended = await this.#turn();
        if (ended) return ended;
      }
    } finally {
      this.#carry.release();
    }
  }

  /** One step and what follows it: the run's result once it has ended. */
  async #turn(): Promise<ThreadRunResult | undefined> {
    const { limits, signal } = this.#options;
    const wall = this.#now() - this.#started;
    if (limits.maxWallMs !== undefined && wall >= limits.maxWallMs) {
      await this.#ledger.limitReached(
        this.#thread,
        "wall_time",
        Math.round(wall),
        limits.maxWallMs,
      );
      return this.#end("limit");
    }
    if (signal?.aborted) return this.#end("cancelled");
    const bundle = await this.#prepare();
    if ("status" in bundle) return bundle;
    const taken = await this.#take(bundle);
    // Something else was written before the last step's end: compile again from the log.
    if (!taken) return undefined;
    this.#account(taken);
    const verdict = await this.#decide(taken);
    return this.#follow(taken, verdict);
  }

  /**
   * The next step's context: the history caught up, long inputs cut, the step's feeds read and
   * logged (once a step), compiled, and handed off first when it left messages out. An ended run
   * when even that does not fit.
   */
  async #prepare(): Promise<ContextBundle | ThreadRunResult> {
    const { lifecycle } = this.#options;
    // The last step's end may still be queued: it is read ahead (see `StepAhead`).
    await this.#ahead.catchUp(this.#history);
    await this.#cutInputs();
    // A handoff before the compile keeps these feeds: one read of the world per step.
    if (!this.#retrying) await this.#readFeeds();
    let bundle = this.#compile();
    if (lifecycle && (bundle.omitted > 0 || bundle.overBudget)) {
      // A handoff logs the history's seqs: only written ones.
      if (this.#ahead.ahead) {
        await this.#ahead.settle(this.#history);
        bundle = this.#compile();
      }
      const next = await lifecycle.beforeStep({
        thread: this.#thread,
        history: this.#history,
        bundle,
        nextStep: this.#index,
        continues: true,
        runStarted: this.#ledger.continuationStarted(),
        runCompleted: this.#ledger.completed(this.#thread, { status: "continued" }),
        responseId: this.#lastResponseId,
      });
      if (next) {
        this.#switchTo(next);
        await catchUp(this.#options.store, this.#options.continuity, this.#history);
        await this.#cutInputs();
        bundle = this.#compile();
      }
    }
    if (!bundle.overBudget) return bundle;
    // Inputs are cut and full threads hand off before this: what is left is the fixed part.
    return this.#end("failed", {
      error: {
        code: "context.over-budget",
        message: `the context of ${this.#thread} needs ${bundle.tokens} tokens, more than the ${this.#budget} ${this.#options.model} takes, even with every long input cut and nothing older than the newest turn: shorten the directive, its pinned items or its context feeds, or use a model with a larger window`,
      },
    });
  }

  /** Reads the step's context feeds and logs them (`context.feeds`). */
  async #readFeeds(): Promise<void> {
    const { store, continuity } = this.#options;
    const feedsStep = stepStreamId(this.#thread, this.#index);
    this.#feeds = await this.#options.feeds?.(feedsStep);
    if (this.#feeds === undefined) return;
    await store.append({
      continuity,
      stream: { kind: "step", id: feedsStep },
      type: "context.feeds",
      data: {
        text: this.#feeds.text,
        ...(Object.keys(this.#feeds.values).length > 0 ? { values: this.#feeds.values } : {}),
      },
    });
  }

  #compile(): ContextBundle {
    const options = this.#options;
    return compileContext(
      this.#history.view(),
      {
        name: options.directive,
        system: options.system,
        ...(options.nativeTools ? { tools: options.nativeTools.specs } : {}),
      },
      {
        model: options.model,
        budget: this.#budget,
        maxOutputTokens: this.#reserve,
        ...(options.summaryTokens !== undefined ? { summaryTokens: options.summaryTokens } : {}),
        ...(this.#feeds ? { feeds: this.#feeds.text } : {}),
      },
      options.estimator,
    );
  }

  /** Cuts inputs too long for the context to artifacts: logged, then applied by the history. */
  async #cutInputs(): Promise<void> {
    const { store, continuity } = this.#options;
    const plan = () =>
      planInputCuts(this.#history.view(), this.#inputLimit, this.#inputCounts, (entry, id) =>
        this.#history.whole(entry, id),
      );
    let cuts = plan();
    if (cuts.length === 0) return;
    // A cut names its message's seq: only a written one.
    if (this.#ahead.ahead) {
      await this.#ahead.settle(this.#history);
      cuts = plan();
      if (cuts.length === 0) return;
    }
    await logInputCuts(store, continuity, this.#thread, cuts);
    await catchUp(store, continuity, this.#history);
  }

  /**
   * Takes the step: its start (`context.compiled`, `step.started`), the model's stream and its
   * actions, and its end. `undefined` when its start was refused (`store.seq-moved`): the history
   * is back at what is written, and the step is compiled again.
   */
  async #take(bundle: ContextBundle): Promise<TakenStep | undefined> {
    const options = this.#options;
    const { store, continuity } = options;
    const step = stepStreamId(this.#thread, this.#index);
    const record = prepareBundle(store.artifacts, bundle, this.#known);
    // The system prompt's artifact (new prompts only) is stored before the `context.compiled`
    // that names it is appended, in one commit with the step's `step.started`.
    await record.stored;
    if (!this.#retrying) {
      notify(options.observer, {
        type: "step-started",
        step,
        index: this.#index,
        model: options.model,
        provider: options.provider.name,
      });
    }
    const files = await options.files?.(this.#thread);
    // OpenAI Responses continues from the thread's cursor when it can (only the new messages).
    const rotatedIn = this.#thread;
    const call = stepRequest({
      bundle,
      messages: this.#history.view().messages,
      cursor: this.#history.cursor(),
      provider: options.provider,
      onRotate: (rotation) =>
        store.append(cursorRotatedEvent(continuity, rotatedIn, rotation, step)).then(() => {}),
    });
    const start = this.#ahead.startOptions();
    let early: EarlyDecision | undefined;
    try {
      const outcome = await runAgentStep({
        store,
        continuity,
        thread: this.#thread,
        index: this.#index,
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
          initial: this.#history.variables(),
          ...(this.#feeds ? { fallbacks: [feedValueSource(this.#feeds.values)] } : {}),
        }),
        ...(options.nativeTools ? { nativeNames: options.nativeTools.names } : {}),
        estimator: options.estimator,
        ...(options.signer ? { signer: options.signer } : {}),
        ...(options.observer ? { observer: options.observer } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.random ? { random: options.random } : {}),
        ...(options.tasks ? { tasks: options.tasks } : {}),
        ...(start ? { start } : {}),
        endLater: true,
        carry: this.#carry,
        conclude: (ended) => {
          early = this.#decideEarly(step, ended);
          return early && [early.event];
        },
        ...(files
          ? {
              transcript: files.transcript,
              knowledge: files.knowledge,
              threadStartSeq: files.startSeq,
            }
          : {}),
      });
      this.#retrying = false;
      return { step, bundle, outcome, early };
    } catch (error) {
      if (!isSeqMoved(error)) throw error;
      await this.#ahead.settle(this.#history);
      this.#retrying = true;
      return undefined;
    }
  }

  /**
   * The loop's decision as the step ends, committed with its `step.completed`; `undefined` for a
   * failed call the error hooks must see first (they may retry it: decided after).
   */
  #decideEarly(step: string, ended: AgentStepResult): EarlyDecision | undefined {
    const { signal, lifecycle, limits, continuity } = this.#options;
    const decision = decide(ended, signal);
    if (decision.decision === "fail" && ended.message.error && lifecycle) return undefined;
    const projected = this.#ledger.projected(ended.message.usage);
    const limit =
      decision.decision === "continue"
        ? overLimit(limits, projected, projected.steps, this.#now() - this.#started)
        : undefined;
    const event = loopDecided(continuity, this.#threadStream, step, decision, limit, ended);
    return { decision, limit, event };
  }

  /** Counts the step into the run's totals and tells the observer. */
  #account({ step, outcome }: TakenStep): void {
    this.#ahead.stepEnded(outcome.ended);
    this.#index += 1;
    this.#lastResponseId = outcome.message.responseId;
    const cost = this.#ledger.account(outcome);
    const inputTokens = outcome.message.usage.inputTokens;
    notify(this.#options.observer, {
      type: "step-completed",
      step,
      usage: outcome.message.usage,
      ...(cost !== undefined ? { costUsd: cost } : {}),
      ...(inputTokens > 0 ? { pressure: inputTokens / this.#options.window.contextWindow } : {}),
      totals: { ...this.#ledger.totals },
    });
  }

  /**
   * What the run does after the step: the decision made as it ended, or made now after the error
   * hooks (a retry) or a context too long for the window (a handoff); logged unless it was.
   */
  async #decide({ step, outcome, early }: TakenStep): Promise<StepVerdict> {
    const { store, continuity, lifecycle, signal, limits } = this.#options;
    let decision = early?.decision ?? decide(outcome, signal);
    // Only a step the run goes on from is not waited for: hooks, limits and the run's end
    // follow a written step.
    if (decision.decision !== "continue" || early?.limit) await this.#ahead.written();
    let retryDelay = 0;
    // Too long for the window: the lifecycle hands the thread off (only it can), not the hooks.
    const overflow = lifecycle
      ? contextOverflowDecision(decision, outcome, this.#overflowed)
      : undefined;
    this.#overflowed = overflow !== undefined;
    if (overflow) {
      decision = overflow;
    } else if (decision.decision === "fail" && outcome.message.error && lifecycle) {
      this.#errorAttempt += 1;
      const verdict = await lifecycle.onError({
        thread: this.#thread,
        step,
        attempt: this.#errorAttempt,
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
      this.#errorAttempt = 0;
    }
    let limit = early?.limit;
    if (!outcome.concluded) {
      limit =
        decision.decision === "continue" || decision.decision === "retry"
          ? overLimit(
              limits,
              this.#ledger.totals,
              this.#ledger.totals.steps,
              this.#now() - this.#started,
            )
          : undefined;
      await store.append(
        loopDecided(continuity, this.#threadStream, step, decision, limit, outcome),
      );
    }
    return { decision, limit, retryDelay };
  }

  /**
   * Carries the verdict out: a limit or an end finishes the run, and the continuity module looks
   * at every step (it may hand the thread off). `undefined` while the run goes on.
   */
  async #follow(taken: TakenStep, verdict: StepVerdict): Promise<ThreadRunResult | undefined> {
    const { lifecycle, signal } = this.#options;
    const { decision, limit, retryDelay } = verdict;
    if (limit) {
      await this.#ledger.limitReached(this.#thread, limit.limit, limit.value, limit.max);
      return this.#end("limit");
    }
    const continues = decision.decision === "continue" || decision.decision === "retry";
    let ended: ThreadRunResult | undefined;
    if (decision.decision === "cancel") return this.#end("cancelled");
    if (decision.decision === "complete") {
      ended = await this.#end("completed", {
        result: decision.result,
      });
    } else if (decision.decision === "fail") {
      ended = await this.#end("failed", {
        error: decision.error!,
      });
    }
    if (lifecycle) {
      const { step, bundle, outcome } = taken;
      const next = await lifecycle.afterStep({
        thread: this.#thread,
        history: this.#history,
        index: this.#index - 1,
        step,
        bundle,
        usage: outcome.message.usage,
        decision: decision.decision,
        nextStep: this.#index,
        continues,
        runStarted: this.#ledger.continuationStarted(),
        runCompleted: this.#ledger.completed(this.#thread, { status: "continued" }),
        responseId: outcome.message.responseId,
        contextTooLong: this.#overflowed,
        ...(outcome.ended !== undefined ? { ended: outcome.ended } : {}),
      });
      if (next) this.#switchTo(next);
    }
    if (ended) {
      const thread = ended.thread;
      return { ...ended, nextStep: this.#thread === thread ? this.#index : 0, thread };
    }
    if (retryDelay > 0) await lifecycle?.sleep(retryDelay, signal);
    return undefined;
  }

  #switchTo(next: { thread: string; history: ThreadHistory; reason: string }): void {
    notify(this.#options.observer, {
      type: "handoff",
      from: this.#thread,
      to: next.thread,
      reason: next.reason,
    });
    this.#thread = next.thread;
    this.#history = next.history;
    this.#index = 0;
  }
}
