import type { ModelInfo, Usage } from "../providers/index.js";
import { costOf, emptyUsage, toUsageData } from "../providers/index.js";
import type { EventData } from "../spec/index.js";
import type { ThreadRunOptions, ThreadRunResult } from "./agent-loop-types.js";
import { type AgentStepResult, notify } from "./agent-step.js";
import { addUsage, projectTotals } from "./loop-decision.js";
import type { RunLimitName, RunTotals } from "./run-notice.js";

/** How a run ended besides its status: its result or its error. */
export type RunEnd = { result?: string; error?: { code: string; message: string } };

/**
 * What one run of a thread has spent (steps, actions, tokens, cost) and the run's own events:
 * `run.started`, `limit.reached` and `run.completed`, each on the stream of the thread the run is
 * on when it is logged (a handoff moves it), and told to the observer.
 */
export class RunLedger {
  readonly usage: Usage = emptyUsage();
  readonly totals: RunTotals = {
    steps: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    actions: 0,
  };
  readonly #options: ThreadRunOptions;
  readonly #info: ModelInfo | undefined;

  constructor(options: ThreadRunOptions) {
    this.#options = options;
    this.#info = options.catalogue.lookup(options.model);
  }

  /** Logs `run.started` on `thread`, whose next step is `index`, and tells the observer. */
  async started(thread: string, index: number): Promise<void> {
    const { store, continuity, turn, input, resumed, directive, model } = this.#options;
    await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "run.started",
      data: {
        ...(turn ? { turn } : {}),
        ...(input !== undefined ? { input } : {}),
        resumed: resumed ?? false,
        directive,
        model,
        next_step: index,
      },
    });
    notify(this.#options.observer, {
      type: "run-started",
      continuity,
      thread,
      ...(turn ? { turn } : {}),
      resumed: resumed ?? false,
    });
  }

  /** The totals as they would be with a step that used `usage` (for a limit decided early). */
  projected(usage: Usage): RunTotals {
    return projectTotals(this.totals, this.usage, usage, this.#info);
  }

  /** Counts a step into the totals; returns its cost in USD when the model's prices are known. */
  account(outcome: AgentStepResult): number | undefined {
    const { totals, usage } = this;
    totals.steps += 1;
    totals.actions += outcome.summary.actions.length;
    addUsage(usage, outcome.message.usage);
    totals.inputTokens = usage.inputTokens;
    totals.outputTokens = usage.outputTokens;
    const cost = this.#info ? costOf(outcome.message.usage, this.#info).total : undefined;
    if (cost !== undefined) totals.costUsd += cost;
    return cost;
  }

  /** `run.started` of a continuation the run may go on in. */
  continuationStarted(): EventData<"run.started"> {
    const { directive, model } = this.#options;
    return { resumed: false, directive, model, next_step: 0 };
  }

  /** `run.completed` on `thread` (the turn is named on the thread the run began on only). */
  completed(
    thread: string,
    extra: { status: ThreadRunResult["status"] } & RunEnd,
  ): EventData<"run.completed"> {
    const { turn } = this.#options;
    return {
      ...(turn && thread === this.#options.thread ? { turn } : {}),
      status: extra.status,
      steps: this.totals.steps,
      ...(extra.result !== undefined ? { result: extra.result } : {}),
      ...(extra.error ? { error: extra.error } : {}),
      usage: toUsageData(this.usage),
      cost_usd: this.totals.costUsd,
    };
  }

  /** Ends the run on `thread` (next step `index`): logs `run.completed` and tells the observer. */
  async finish(
    thread: string,
    index: number,
    status: ThreadRunResult["status"],
    extra: RunEnd = {},
  ): Promise<ThreadRunResult> {
    const { store, continuity, observer } = this.#options;
    this.#options.ending?.();
    await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "run.completed",
      data: this.completed(thread, { status, ...extra }),
    });
    const totals = this.totals;
    notify(observer, { type: "run-ended", thread, status, ...extra, totals: { ...totals } });
    return { thread, status, steps: totals.steps, nextStep: index, ...extra, totals };
  }

  /** Logs `limit.reached` on `thread`, tells the observer and the `limit` hooks. */
  async limitReached(thread: string, limit: RunLimitName, value: number, max: number) {
    const { store, continuity, observer, lifecycle } = this.#options;
    await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "limit.reached",
      data: { limit, value, max },
    });
    notify(observer, { type: "limit", limit, value, max });
    await lifecycle?.onLimit({ thread, limit, value, max });
  }
}
