import {
  type BackoffPolicy,
  DependencyGraph,
  type SchedulerClock,
  substituteParameters,
  toActionError,
  toJsonValue,
  type VariableSource,
} from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import type { ActionType } from "../protocol/index.js";
import { describeError, type StreamRef } from "../spec/index.js";
import { type AttemptsOutcome, runStepAttempts } from "./step-attempts.js";
import type { WorkflowDefinition, WorkflowStep } from "./workflow-definition.js";
import { WorkflowError } from "./workflow-error.js";

/** One inner action a workflow step runs, handed to the injected `run`. */
export interface WorkflowInnerCall {
  /**
   * The step stream the runtime records the inner action in: the graph's id (a workflow's inner
   * actions are a step of their own, on the step stream named like the graph's task stream,
   * never a model step `<thread>:<n>`).
   */
  step: string;
  /**
   * The inner action's id in that step, unique and deterministic: `steps.<node>`, then
   * `.<item>` in a `foreach` step, then `@<attempt>` from the second attempt on (the names
   * `$steps.<node>` and `$steps.<node>.<item>` give its output).
   */
  actionId: string;
  type: ActionType;
  name: string;
  /** With every `$inputs`, `$steps`, `$<as>` and `$index` reference substituted. */
  parameters: Record<string, unknown>;
  /** Aborted on the step's timeout or when the workflow is cancelled. */
  signal: AbortSignal;
  /** The graph (and task stream) id, the step's id, and, in a `foreach` step, the item's index. */
  graph: string;
  node: string;
  item?: number;
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number;
  /**
   * The step's `timeout_ms`, for a `run` that keeps the time itself (`timeouts: "run"`): it
   * rejects with a retryable error once the action has run that long.
   */
  timeoutMs?: number;
}

/** What `runWorkflowGraph` needs: the validated workflow, its inputs, and where things go. */
export interface WorkflowGraphOptions {
  store: EventStore;
  continuity: string;
  /** The task stream the graph's events go to; its id is also the graph's id. */
  stream: StreamRef;
  definition: WorkflowDefinition;
  /** Resolved inputs (defaults applied, types checked). */
  inputs: Record<string, unknown>;
  run(call: WorkflowInnerCall): Promise<unknown>;
  /**
   * Who keeps a step's `timeout_ms`: `engine` (default) times each attempt on `clock` and fails
   * it with `workflow.timeout`; `run` hands it to `run` as `timeoutMs` (the runtime's scheduler
   * starts it when the action runs, not while it waits its turn in the serial queue).
   */
  timeouts?: "engine" | "run";
  signal: AbortSignal;
  clock: SchedulerClock;
  backoff: BackoffPolicy;
  random: () => number;
}

type StepOutcome = AttemptsOutcome | { kind: "failed"; error: unknown; output: unknown };
type ErrorData = { code: string; message: string };

/**
 * Runs a validated workflow graph and resolves with its `output`.
 *
 * Contract:
 * - Events, all on `options.stream`: `graph.started` (nodes and dependencies) first; per step
 *   `step.started` (durable before its action runs) and `step.completed` (`succeeded`,
 *   `failed`, or `skipped` without a `step.started` when a dependency failed); `foreach.completed`
 *   before the `step.completed` of a `foreach` step; then exactly one of `graph.completed`
 *   (with the result), `graph.error` (the failed step first in the workflow's order) or
 *   `graph.cancelled`.
 * - What is recorded depends on the inner actions' outcomes, never on the order they finished
 *   in (only the order of events of different steps does): so a replay that serves the same
 *   outcomes in another order records the same events, step by step.
 * - A step starts the moment its last dependency has succeeded; independent steps run at once.
 *   A `foreach` step runs its items with at most `concurrency` at a time, each with its own
 *   retries, and fails when any item failed (after all of them ran), naming the lowest one.
 * - A failed step with `on_error: fail` skips its dependents (transitively, each once all its
 *   dependencies have settled, naming the first that did not succeed) while independent steps go
 *   on; the workflow then rejects with `workflow.step-failed`. With `on_error: skip` the failure
 *   is recorded and the dependents run, seeing `null` (a `foreach` step: its list, with `null`
 *   for each failed item).
 * - Each attempt's inner action goes to `options.run` with its step stream and action id
 *   (`WorkflowInnerCall`).
 * - Aborting `signal` aborts every attempt under way, starts nothing more, records
 *   `graph.cancelled` and rejects with `workflow.cancelled`. Rejections are not retryable: a
 *   workflow's completed steps had their effects.
 */
export function runWorkflowGraph(options: WorkflowGraphOptions): Promise<unknown> {
  return new GraphRun(options).run();
}

class GraphRun {
  readonly #options: WorkflowGraphOptions;
  readonly #graphId: string;
  readonly #steps: Map<string, WorkflowStep>;
  readonly #dag = new DependencyGraph();
  readonly #outputs: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  readonly #controller = new AbortController();
  #open: number;
  /** Steps that failed with `on_error: fail`, and their errors. */
  readonly #failures = new Map<string, ErrorData>();
  /** Settled steps: true when their dependents may run (succeeded, or failed with `skip`). */
  readonly #done = new Map<string, boolean>();
  /** Steps a failed dependency keeps from running, not recorded as skipped yet. */
  readonly #doomed = new Set<string>();
  #fault: { error: unknown } | undefined;
  #wake: () => void = () => undefined;

  constructor(options: WorkflowGraphOptions) {
    this.#options = options;
    this.#graphId = options.stream.id;
    this.#steps = new Map(options.definition.steps.map((step) => [step.id, step]));
    this.#open = this.#steps.size;
  }

  async run(): Promise<unknown> {
    const { definition, signal, clock } = this.#options;
    const startedAt = clock.now();
    const finished = new Promise<void>((resolve) => {
      this.#wake = () => {
        if (this.#open === 0 || this.#fault || this.#controller.signal.aborted) resolve();
      };
    });
    const onAbort = () => {
      this.#controller.abort(signal.reason);
      this.#wake();
    };
    await this.#emit("graph.started", {
      name: definition.name,
      nodes: definition.steps.map((step) => ({
        node: step.id,
        name: label(step),
        ...(step.depends.length > 0 ? { depends_on: step.depends } : {}),
      })),
    });
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      if (signal.aborted) onAbort();
      const ready = definition.steps.filter((step) => this.#dag.add(step.id, step.depends).ready);
      for (const step of ready) this.#launch(step.id);
      await finished;
      if (this.#fault) throw this.#fault.error;
      if (this.#controller.signal.aborted) {
        const reason = describeError(signal.reason).slice(0, 2000) || "cancelled";
        await this.#emit("graph.cancelled", { reason });
        throw new WorkflowError(
          "workflow.cancelled",
          `workflow "${definition.name}" was cancelled: ${reason}`,
        );
      }
      const failed = definition.steps.find((step) => this.#failures.has(step.id));
      if (failed) {
        const node = failed.id;
        const error = this.#failures.get(node)!;
        await this.#emit("graph.error", { node, error });
        throw new WorkflowError(
          "workflow.step-failed",
          `workflow "${definition.name}" failed: step "${node}" failed: ${error.message}`,
          { details: { node, error } },
        );
      }
      const result = toJsonValue(this.#substitute(definition.output ?? this.#defaultOutput()));
      await this.#emit("graph.completed", { duration_ms: elapsed(clock, startedAt), result });
      return result;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  #emit(type: string, data: Record<string, unknown>): Promise<unknown> {
    const { store, continuity, stream } = this.#options;
    return store.append({ continuity, stream, type, data: { graph: this.#graphId, ...data } });
  }

  #launch(id: string): void {
    void this.#runStep(this.#steps.get(id)!).catch((error: unknown) => {
      // The log failed: stop everything, since nothing more can be recorded.
      this.#fault ??= { error };
      this.#controller.abort(error);
      this.#wake();
    });
  }

  get #aborted(): boolean {
    return this.#controller.signal.aborted;
  }

  async #runStep(step: WorkflowStep): Promise<void> {
    const { clock } = this.#options;
    const startedAt = clock.now();
    const base = { kind: "graph", node: step.id, name: label(step) };
    await this.#emit("step.started", base);
    if (this.#aborted) return;
    const outcome =
      step.foreach === undefined ? await this.#runSingle(step) : await this.#runForeach(step);
    if (outcome.kind === "cancelled" || this.#aborted) return;
    const duration_ms = elapsed(clock, startedAt);
    if (outcome.kind === "succeeded") {
      this.#outputs[step.id] = toJsonValue(outcome.output);
      await this.#emit("step.completed", { ...base, status: "succeeded", duration_ms });
      return this.#settle(step.id, true);
    }
    const error = errorData(outcome.error);
    await this.#emit("step.completed", { ...base, status: "failed", duration_ms, error });
    if (step.on_error === "skip") {
      this.#outputs[step.id] = "output" in outcome ? toJsonValue(outcome.output) : null;
      return this.#settle(step.id, true);
    }
    this.#failures.set(step.id, error);
    return this.#settle(step.id, false);
  }

  /**
   * Settles step `id` and starts the steps it released. A step a failure keeps from running is
   * recorded as skipped once all its dependencies have settled, naming the first of them (in its
   * `depends` order) that failed or was skipped: the same whatever order they finished in, so a
   * replay records the same skip.
   */
  async #settle(id: string, succeeded: boolean): Promise<void> {
    // Once cancelled, nothing more is recorded after `graph.cancelled`.
    if (this.#aborted) return;
    const released = this.#dag.settle(id, succeeded);
    this.#done.set(id, succeeded);
    this.#open -= 1;
    for (const node of released.blocked) this.#doomed.add(node);
    const skips: Promise<unknown>[] = [];
    for (let node = this.#nextSkip(); node !== undefined; node = this.#nextSkip()) {
      const step = this.#steps.get(node)!;
      const cause = step.depends.find((dep) => this.#done.get(dep) === false)!;
      this.#doomed.delete(node);
      this.#done.set(node, false);
      this.#open -= 1;
      for (const next of this.#dag.settle(node, false).blocked) this.#doomed.add(next);
      skips.push(
        this.#emit("step.completed", {
          kind: "graph",
          node,
          name: label(step),
          status: "skipped",
          duration_ms: 0,
          error: { code: "workflow.dependency-failed", message: `step "${cause}" failed` },
        }),
      );
    }
    if (!this.#aborted) for (const node of released.ready) this.#launch(node);
    await Promise.all(skips);
    this.#wake();
  }

  /** A doomed step whose dependencies have all settled, if there is one. */
  #nextSkip(): string | undefined {
    for (const node of this.#doomed) {
      if (this.#steps.get(node)!.depends.every((dep) => this.#done.has(dep))) return node;
    }
    return undefined;
  }

  #runSingle(step: WorkflowStep): Promise<AttemptsOutcome> {
    const parameters = substituteParameters(step.action.parameters, this.#source());
    return this.#attempts(step, parameters, undefined);
  }

  async #runForeach(step: WorkflowStep): Promise<StepOutcome> {
    const { clock } = this.#options;
    const startedAt = clock.now();
    const items = Array.isArray(step.foreach)
      ? (this.#substitute(step.foreach) as unknown[])
      : this.#substitute(step.foreach);
    if (!Array.isArray(items)) {
      const error = new WorkflowError(
        "workflow.foreach-not-list",
        `foreach of step "${step.id}" (${String(step.foreach)}) is ${describeValue(items)}, not a list`,
        { hint: "Point foreach at a list: an input of type array, or a step that returns one" },
      );
      return { kind: "failed", error, attempts: 0 };
    }
    const outputs: unknown[] = new Array(items.length).fill(null);
    let succeeded = 0;
    let firstFailure: { index: number; error: unknown } | undefined;
    let next = 0;
    const worker = async () => {
      while (next < items.length && !this.#aborted) {
        const index = next++;
        const source = this.#source({ [step.as]: items[index], index });
        const parameters = substituteParameters(step.action.parameters, source);
        const outcome = await this.#attempts(step, parameters, index);
        if (outcome.kind === "cancelled") return;
        if (outcome.kind === "succeeded") {
          outputs[index] = toJsonValue(outcome.output);
          succeeded += 1;
        } else if (firstFailure === undefined || index < firstFailure.index) {
          // The lowest failed index, not the earliest failure: the same in any order of finishing.
          firstFailure = { index, error: outcome.error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(step.concurrency, items.length) }, worker));
    if (this.#aborted) return { kind: "cancelled" };
    const failed = items.length - succeeded;
    await this.#emit("foreach.completed", {
      node: step.id,
      items: items.length,
      succeeded,
      failed,
      duration_ms: elapsed(clock, startedAt),
    });
    if (!firstFailure) return { kind: "succeeded", output: outputs, attempts: 1 };
    const cause = errorData(firstFailure.error);
    const error = new WorkflowError(
      "workflow.foreach-failed",
      `${failed} of ${items.length} items failed; item ${firstFailure.index}: ${cause.message} (${cause.code})`,
      { details: { failed, items: items.length } },
    );
    return { kind: "failed", error, output: outputs };
  }

  #attempts(
    step: WorkflowStep,
    parameters: Record<string, unknown>,
    item: number | undefined,
  ): Promise<AttemptsOutcome> {
    const { run, clock, backoff, random } = this.#options;
    const { type, name } = step.action;
    const byRun = this.#options.timeouts === "run";
    return runStepAttempts(
      (signal, attempt) =>
        run({
          step: this.#graphId,
          actionId: innerActionId(step.id, item, attempt),
          type,
          name,
          parameters,
          signal,
          graph: this.#graphId,
          node: step.id,
          ...(item !== undefined ? { item } : {}),
          attempt,
          ...(byRun && step.timeout_ms !== undefined ? { timeoutMs: step.timeout_ms } : {}),
        }),
      {
        retries: step.retry,
        timeoutMs: byRun ? undefined : step.timeout_ms,
        signal: this.#controller.signal,
        clock,
        backoff,
        random,
      },
    );
  }

  #source(extra: Record<string, unknown> = {}): VariableSource {
    const values: Record<string, unknown> = {
      inputs: this.#options.inputs,
      steps: this.#outputs,
      ...extra,
    };
    return {
      lookup: (name) => (Object.hasOwn(values, name) ? { value: values[name] } : undefined),
    };
  }

  #substitute(value: unknown): unknown {
    return substituteParameters({ value }, this.#source()).value;
  }

  /** Every step's output, in the workflow's order (not the order the steps finished in). */
  #defaultOutput(): Record<string, unknown> {
    const output: Record<string, unknown> = {};
    for (const step of this.#options.definition.steps) {
      if (Object.hasOwn(this.#outputs, step.id)) output[step.id] = this.#outputs[step.id];
    }
    return output;
  }
}

function innerActionId(node: string, item: number | undefined, attempt: number): string {
  const base = item === undefined ? `steps.${node}` : `steps.${node}.${item}`;
  return attempt > 1 ? `${base}@${attempt}` : base;
}

function label(step: WorkflowStep): string {
  return `${step.action.type}:${step.action.name}`.slice(0, 200);
}

function elapsed(clock: SchedulerClock, since: number): number {
  return Math.max(0, clock.now() - since);
}

function errorData(error: unknown): ErrorData {
  const { code, message } = toActionError(error);
  return { code, message };
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return `the text ${JSON.stringify(value.slice(0, 60))}`;
  return `a ${typeof value}`;
}
