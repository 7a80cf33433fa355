import type { ActionRequest, ActionType } from "../protocol/index.js";
import { describeError, SpoolError } from "../spec/index.js";
import { ActionEntry, type LogWrite } from "./action-entry.js";
import { mayRetry } from "./action-error.js";
import type { ActionLog, ActionLogData, ActionLogEntry } from "./action-log.js";
import { type BackoffPolicy, DEFAULT_BACKOFF } from "./backoff.js";
import type { CheckedActionExecutor } from "./checked-executor.js";
import { type SchedulerClock, systemClock } from "./clock.js";
import { Conditions } from "./conditions.js";
import { DependencyGraph } from "./dependency-graph.js";
import { attemptsAllowed, dispatchedData, executorTable } from "./dispatch-plan.js";
import { LazyAbort } from "./lazy-abort.js";
import { type AttemptEnvironment, type AttemptsResult, runAttempts } from "./run-attempts.js";
import {
  clampMessage,
  cycleMessage,
  dependencyFailedMessage,
  missingMessage,
  unknownExecutorMessage,
} from "./scheduler-messages.js";
import type { ActionOutcome, SkipReason, StepError, StepOutcome } from "./step-outcome.js";
import type { SchedulerObserver, StepScheduler, StepSchedulerOptions } from "./step-scheduler.js";
import { substituteParameters } from "./substitute-parameters.js";
import { terminalEvents } from "./terminal-events.js";
import type { VariableStore } from "./variable-store.js";

/**
 * The scheduler behind `createStepScheduler` (see `StepScheduler` for its contract): a dependency
 * graph, one `ActionEntry` per action, and the bookkeeping of the step's end.
 */
export class SchedulerCore implements StepScheduler {
  readonly variables: VariableStore;
  readonly #log: ActionLog;
  readonly #executors: ReadonlyMap<ActionType, CheckedActionExecutor>;
  readonly #clock: SchedulerClock;
  readonly #env: AttemptEnvironment;
  readonly #defaultRetries: number;
  readonly #observer: SchedulerObserver;
  readonly #graph = new DependencyGraph();
  readonly #entries = new Map<string, ActionEntry>();
  readonly #order: ActionEntry[] = [];
  readonly #errors: StepError[] = [];
  #ended = false;
  #cancelled = false;
  /** Set by `cancelDetached`: every `fire_and_forget` action dispatched later is cancelled too. */
  #tasksCancelled: string | undefined;
  /** Entries whose terminal event is not yet queued in order: all, and `sync`/`async` ones. */
  #openAll = 0;
  #openTracked = 0;
  /** Terminal writes not yet durable (`idle` waits for them; `settled` only for their order). */
  readonly #unsettledWrites = new Set<Promise<unknown>>();
  readonly #conditions = new Conditions();

  constructor(options: StepSchedulerOptions) {
    this.#log = options.log;
    this.variables = options.variables;
    this.#clock = options.clock ?? systemClock;
    this.#env = {
      clock: this.#clock,
      random: options.random ?? Math.random,
      backoff: { ...DEFAULT_BACKOFF, ...options.backoff } satisfies BackoffPolicy,
      mayRetry,
    };
    this.#defaultRetries = options.defaultRetries ?? 3;
    this.#observer = options.observer ?? {};
    this.#executors = executorTable(options.executors);
  }

  get errors(): readonly StepError[] {
    return this.#errors;
  }

  submit(request: ActionRequest): Promise<void> {
    if (this.#entries.has(request.id)) {
      this.#error({
        code: "action.duplicate-id",
        message: `an action with id "${request.id}" was already submitted in this step; the second one did not run. Give every action its own id.`,
        actionId: request.id,
        at: request.span.start,
      });
      return Promise.resolve();
    }
    const entry = this.#register(request);
    if (this.#ended) {
      this.#cancelAction(entry, this.#cancelled ? "the step was cancelled" : "the step had ended");
      return Promise.resolve();
    }
    const added = this.#graph.add(request.id, request.dependsOn);
    const unknown = unknownExecutorMessage(request, this.#executors);
    if (added.cycle) {
      const message = cycleMessage(added.cycle, (id) => this.#graph.dependenciesOf(id));
      const members = added.cycle.map((id) => this.#entries.get(id)!);
      for (const member of members) {
        const self = member === entry && added.selfDependency;
        if (self) this.#skipSelf(member, false);
        else this.#reject(member, "dependency-cycle", message, false, added.cycle);
      }
      for (const member of members) this.#cascade(member);
    } else if (added.selfDependency) {
      this.#skipSelf(entry, true);
    } else if (unknown) {
      this.#reject(entry, "unknown-executor", unknown, true);
    } else if (added.failedDependency !== undefined) {
      this.#skipForDependency(entry, added.failedDependency);
    } else if (added.ready) {
      this.#dispatch(entry);
    }
    if (request.mode === "sync" && !entry.finished && !this.#graph.waitsForUnseen(request.id)) {
      return entry.done;
    }
    return Promise.resolve();
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const missing = [...this.#graph.missing()].map(([id, absent]) => {
      const entry = this.#entries.get(id)!;
      this.#reject(entry, "dependency-missing", missingMessage(absent), false);
      return entry;
    });
    for (const entry of missing) this.#cascade(entry);
    this.#conditions.check();
  }

  settled(): Promise<StepOutcome> {
    return this.#conditions
      .until(() => this.#ended && this.#openTracked === 0)
      .then(() => ({
        actions: this.#order.filter((entry) => entry.tracked).map((entry) => entry.outcome!),
        errors: [...this.#errors],
        cancelled: this.#cancelled,
      }));
  }

  async idle(): Promise<void> {
    await this.#conditions.until(() => this.#ended && this.#openAll === 0);
    // Ended is in the log's queue; idle is durable (a task's result outlives its process).
    while (this.#unsettledWrites.size > 0) await Promise.all(this.#unsettledWrites);
  }

  async cancel(reason: string): Promise<void> {
    if (!this.#cancelled) {
      this.#cancelled = true;
      this.#ended = true;
      for (const entry of this.#order) {
        const detached = entry.request.mode === "fire_and_forget" && entry.state !== "waiting";
        if (!entry.finished && !detached) this.#cancelAction(entry, reason);
      }
      this.#conditions.check();
    }
    await this.settled();
  }

  async cancelDetached(reason: string): Promise<void> {
    this.#tasksCancelled ??= reason;
    for (const entry of this.#order) {
      if (!entry.finished && entry.request.mode === "fire_and_forget")
        this.#cancelAction(entry, reason);
    }
    if (this.#ended) await this.idle();
  }

  runningTasks(): string[] {
    return this.#order
      .filter((entry) => !entry.tracked && !entry.closed && entry.state !== "waiting")
      .map((entry) => entry.request.id);
  }

  outcome(id: string): ActionOutcome | undefined {
    return this.#entries.get(id)?.outcome;
  }

  pendingOutput(key: string): Promise<void> | undefined {
    for (let i = this.#order.length - 1; i >= 0; i--) {
      const entry = this.#order[i]!;
      if (entry.request.outputKey === key && entry.tracked && !entry.finished) return entry.done;
    }
    return undefined;
  }

  #register(request: ActionRequest): ActionEntry {
    const entry = new ActionEntry(request, this.#now, this.#writeFor);
    this.#entries.set(request.id, entry);
    this.#order.push(entry);
    this.#openAll += 1;
    if (entry.tracked) this.#openTracked += 1;
    return entry;
  }

  readonly #now = () => this.#clock.now();
  readonly #writeFor = (entry: ActionEntry, write: LogWrite) => this.#write(entry, write);

  /** Substitutes, asks the executor, records the durable intent, then runs. */
  #dispatch(entry: ActionEntry): void {
    if (entry.finished || entry.state !== "waiting" || this.#cancelled) return;
    if (!entry.tracked && this.#tasksCancelled !== undefined) {
      this.#cancelAction(entry, this.#tasksCancelled);
      return;
    }
    entry.state = "dispatching";
    const { request } = entry;
    const executor = this.#executors.get(request.type)!;
    const parameters = substituteParameters(request.parameters, this.variables);
    let refusal: ReturnType<NonNullable<CheckedActionExecutor["check"]>>;
    try {
      refusal = executor.check?.(request.name, parameters);
    } catch (error) {
      refusal = { reason: "bad-parameters", message: clampMessage(describeError(error)) };
    }
    if (refusal) {
      this.#reject(entry, refusal.reason, clampMessage(refusal.message), true);
      return;
    }
    const waitedMs = Math.max(0, this.#clock.now() - entry.submittedAt);
    const data = dispatchedData(request, parameters, waitedMs);
    entry.executor = executor;
    entry.parameters = parameters;
    entry.maxAttempts = attemptsAllowed(request, this.#defaultRetries);
    entry.timeoutMs = data.timeout_ms;
    entry.serial = executor.serialQueue?.(request.name);
    if (this.#log.pureStartsEarly && entry.serial === undefined && executor.pure?.(request.name)) {
      this.#runEarly(entry, data);
      return;
    }
    const intent = this.#write(entry, ["action.dispatched", data]);
    void intent.then((durable) => {
      if (entry.finished) return;
      if (!durable) this.#unlogged(entry);
      else void this.#start(entry).then((result) => this.#conclude(entry, result));
    });
  }

  #start(entry: ActionEntry): Promise<AttemptsResult> {
    entry.state = "running";
    entry.controller = new LazyAbort();
    return runAttempts(entry, this.#env);
  }

  /**
   * Runs a pure call while its intent is being written (`ActionLog.pureStartsEarly`): its events
   * are recorded `after` the intent, so the log holds none of them without it, and it ends as any
   * action does. A refused intent stops it; if it had already ended, its events' refusals are
   * the step's errors.
   */
  #runEarly(entry: ActionEntry, data: ActionLogData<"action.dispatched">): void {
    // Nothing waits for the intent: it is written with what follows, in one commit.
    const recorded = this.#record(entry, ["action.dispatched", data], {
      ...entry.scope,
      unhurried: true,
    });
    entry.scope = { ...entry.scope, after: recorded };
    void this.#logged(entry, "action.dispatched", recorded).then((durable) => {
      if (!durable) this.#unlogged(entry);
    });
    void this.#start(entry).then((result) => this.#conclude(entry, result));
  }

  /** Ends an action whose intent the log refused: nothing more of it is recorded, a running call is stopped. */
  #unlogged(entry: ActionEntry): void {
    if (entry.finished) return;
    const error = {
      code: "log.write-failed",
      message:
        entry.state === "running"
          ? "the action's intent could not be logged, so it was stopped"
          : "the action's intent could not be logged, so it did not run",
    };
    this.#finish(entry, { status: "failed", error }, []);
    if (entry.state === "running") {
      entry.controller.abort(new SpoolError("log.write-failed", error.message));
      entry.interrupt?.();
    }
  }

  /** Records how the attempts ended, per `on_error` (see `terminalEvents`). */
  #conclude(entry: ActionEntry, result: AttemptsResult): void {
    if (entry.finished) return;
    const terminal = terminalEvents(entry.request, result);
    if (!terminal) {
      this.#cancelAction(entry, "the action's signal was aborted");
      return;
    }
    const key = entry.request.outputKey;
    if (key !== undefined && terminal.outcome.status === "succeeded")
      this.variables.set(key, terminal.outcome.output);
    this.#finish(entry, terminal.outcome, terminal.writes);
  }

  #skipSelf(entry: ActionEntry, cascade: boolean): void {
    const message = `"${entry.request.id}" lists itself in depends_on, so it could never start. Remove its own id.`;
    this.#reject(entry, "self-dependency", message, cascade);
  }

  #skipForDependency(entry: ActionEntry, cause: string): void {
    const status = this.#entries.get(cause)?.outcome?.status ?? "failed";
    this.#skip(entry, "dependency-failed", dependencyFailedMessage(cause, status), true, cause);
  }

  /** A skip whose cause is in what the model wrote: also a step error. */
  #reject(
    entry: ActionEntry,
    reason: SkipReason,
    message: string,
    cascade: boolean,
    cycle?: string[],
  ): void {
    if (entry.finished) return;
    this.#error({
      code: `action.${reason}`,
      message,
      actionId: entry.request.id,
      at: entry.request.span.start,
      ...(cycle ? { cycle } : {}),
    });
    this.#skip(entry, reason, message, cascade);
  }

  #skip(
    entry: ActionEntry,
    reason: SkipReason,
    message: string,
    cascade: boolean,
    cause?: string,
  ): void {
    const data: ActionLogData<"action.skipped"> = { action_id: entry.request.id, reason, message };
    if (cause !== undefined) data.cause_action = cause;
    const outcome: Partial<ActionOutcome> = { status: "skipped", reason, message };
    if (cause !== undefined) outcome.causeAction = cause;
    this.#finish(entry, outcome, [["action.skipped", data]], cascade);
  }

  #cancelAction(entry: ActionEntry, reason: string): void {
    if (entry.finished) return;
    const message = clampMessage(reason);
    const data: ActionLogData<"action.cancelled"> = {
      action_id: entry.request.id,
      reason: message,
    };
    if (entry.startedAt !== undefined) data.duration_ms = this.#clock.now() - entry.startedAt;
    // Cancelling the step cancels every owned action itself: no dependency-failed cascade then.
    this.#finish(
      entry,
      { status: "cancelled", message },
      [["action.cancelled", data]],
      !this.#cancelled,
    );
    if (entry.state === "running") {
      entry.controller.abort(new SpoolError("action.cancelled", message));
      entry.interrupt?.();
    }
  }

  /**
   * Ends `entry` once: writes its terminal events in order, resolves its `done` when they are in
   * the store's queue (`ActionLog.queued`; durable, for a log without it), and (unless `cascade` is false, for batches settled together) releases or skips
   * its dependents.
   */
  #finish(
    entry: ActionEntry,
    outcome: Partial<ActionOutcome>,
    writes: LogWrite[],
    cascade = true,
  ): void {
    if (entry.finished) return;
    entry.finished = true;
    const { request } = entry;
    entry.outcome = {
      id: request.id,
      type: request.type,
      mode: request.mode,
      name: request.name,
      status: outcome.status ?? "failed",
      attempts: entry.attempts,
      ...outcome,
    };
    const written =
      writes.length === 1
        ? this.#write(entry, writes[0]!)
        : Promise.all(writes.map((write) => this.#write(entry, write)));
    // In the store's queue is enough: what the step appends next is written after them.
    this.#unsettledWrites.add(written);
    void written.then(() => this.#unsettledWrites.delete(written));
    const ended = this.#log.queued?.() ?? written;
    void ended.then(() => {
      this.#openAll -= 1;
      if (entry.tracked) this.#openTracked -= 1;
      entry.close();
      this.#conditions.check();
    });
    if (cascade) this.#cascade(entry);
  }

  /** Tells the graph how `entry` ended and starts or skips the dependents that releases. */
  #cascade(entry: ActionEntry): void {
    const outcome = entry.outcome!;
    const ok =
      outcome.status === "succeeded" ||
      (outcome.status === "skipped" && outcome.reason === "on-error-skip");
    const { ready, blocked } = this.#graph.settle(entry.request.id, ok);
    for (const id of blocked) this.#skipForDependency(this.#entries.get(id)!, entry.request.id);
    for (const id of ready) this.#dispatch(this.#entries.get(id)!);
  }

  /** Records one event; resolves false (and adds a step error) when the log refused it. */
  #write(entry: ActionEntry, write: LogWrite): Promise<boolean> {
    return this.#logged(entry, write[0], this.#record(entry, write));
  }

  /** Hands one event to the log (with `scope`, by default the entry's) and to the observer. */
  #record(entry: ActionEntry, [type, data]: LogWrite, scope = entry.scope): Promise<void> {
    const task = scope?.task;
    this.#observer.onEvent?.(
      (task !== undefined ? { type, data, task } : { type, data }) as ActionLogEntry,
    );
    try {
      return this.#log.record(type, data as never, scope);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Whether `recorded` was logged; a refusal is a step error. */
  #logged(entry: ActionEntry, type: string, recorded: Promise<void>): Promise<boolean> {
    return recorded.then(
      () => true,
      (error: unknown) => {
        // What follows a refused intent is refused with it: one step error says so.
        if (entry.intentRefused) return false;
        if (type === "action.dispatched") entry.intentRefused = true;
        this.#error({
          code: "log.write-failed",
          message: `${type} for action "${entry.request.id}" could not be logged: ${describeError(error)}`,
          actionId: entry.request.id,
        });
        return false;
      },
    );
  }

  #error(error: StepError): void {
    this.#errors.push(error);
    this.#observer.onError?.(error);
  }
}
