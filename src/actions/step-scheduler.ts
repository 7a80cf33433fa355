import type { ActionRequest } from "../protocol/index.js";
import type { ActionLog, ActionLogEntry } from "./action-log.js";
import type { BackoffPolicy } from "./backoff.js";
import type { CheckedActionExecutor } from "./checked-executor.js";
import type { SchedulerClock } from "./clock.js";
import type { ActionExecutor } from "./executor.js";
import { SchedulerCore } from "./scheduler-core.js";
import type { ActionOutcome, StepError, StepOutcome } from "./step-outcome.js";
import type { VariableStore } from "./variable-store.js";

/** Sees what the scheduler does as it happens (the step runner turns it into output events). */
export interface SchedulerObserver {
  /** Every event the scheduler records, synchronously, before it is durable. */
  onEvent?(entry: ActionLogEntry): void;
  /** Every step error, as it is found. */
  onError?(error: StepError): void;
}

/** Options of `createStepScheduler`. */
export interface StepSchedulerOptions {
  log: ActionLog;
  /** One executor per action type; a second one for the same type is a `ConfigError`. */
  executors: readonly (ActionExecutor | CheckedActionExecutor)[];
  /** Where `$name` resolves and where `output_key` results go. */
  variables: VariableStore;
  clock?: SchedulerClock;
  /** Jitter source for retry backoff, [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Retry backoff (default `DEFAULT_BACKOFF`: 250 ms ×2, at most 10 s, up to half jitter). */
  backoff?: Partial<BackoffPolicy>;
  /** Further attempts for `on_error: "retry"` when the action gives `retry: 0` (default 3). */
  defaultRetries?: number;
  observer?: SchedulerObserver;
}

/**
 * Runs the actions of one step as the parser hands them over.
 *
 * Contract:
 * - `submit` is called at each `</action>`. It never throws for anything the model wrote; every
 *   problem becomes an `action.skipped` event and a step error. For a `sync` action its promise
 *   resolves once the action has ended (terminal event queued in order, see `ActionLog.queued`): the caller holds later output
 *   until then. An exception: a `sync` action that waits (directly or through its dependencies)
 *   for an id not seen yet does not hold, since the output it waits for could never arrive.
 *   For `async` and `fire_and_forget` the promise resolves at once.
 * - An action starts the instant its last dependency succeeds: parameters are substituted then,
 *   `action.dispatched` is recorded and awaited, then the executor is called.
 * - Failures: `retry: N` gives N further attempts whatever `on_error` says (`on_error: "retry"`
 *   with `retry: 0` gives `defaultRetries`), with backoff, except after a `SpoolError` that says
 *   `retryable: false`; `timeout` is per attempt. After the last attempt, `on_error: "fail"` and
 *   `"retry"` record `action.failed` (or `action.timed-out`) and skip the dependents
 *   (`dependency-failed`, transitively); `on_error: "skip"` records one `action.skipped`
 *   (`on-error-skip`) with the error and lets the dependents run without its output.
 * - `end()` says the output is over: actions still waiting for ids that never appeared are
 *   skipped (`dependency-missing`). `settled()` resolves once `end()` (or `cancel`) was called and
 *   every `sync` and `async` action has ended, its terminal events in the log's queue: what the
 *   caller appends next (the step's `step.completed`) is written after them, in their commit or a
 *   later one. `fire_and_forget` actions are not waited for and not reported. `idle()` also waits
 *   for those, and until every terminal event is durable.
 * - `cancel(reason)` ends the step: every action not yet dispatched, and every dispatched `sync`
 *   or `async` action, gets its signal aborted and `action.cancelled`. A `fire_and_forget` action
 *   belongs to the step only until it is dispatched; after that it is a detached task that
 *   `cancel` leaves running and `cancelDetached` stops (it also cancels every `fire_and_forget`
 *   action dispatched after it, so a step still running cannot start a task nobody stops).
 * - `runningTasks()` lists the ids of `fire_and_forget` actions dispatched and not yet ended.
 */
export interface StepScheduler {
  readonly variables: VariableStore;
  /** Step errors so far (cycles, missing and self-dependencies, refusals, log failures). */
  readonly errors: readonly StepError[];
  submit(action: ActionRequest): Promise<void>;
  end(): void;
  settled(): Promise<StepOutcome>;
  idle(): Promise<void>;
  cancel(reason: string): Promise<void>;
  cancelDetached(reason: string): Promise<void>;
  runningTasks(): string[];
  /** The outcome of action `id` once it has ended. */
  outcome(id: string): ActionOutcome | undefined;
  /**
   * When a `sync` or `async` action of this step that stores `$key` has not ended yet: a promise
   * that resolves when it has. `undefined` when nothing pending will set `key`.
   */
  pendingOutput(key: string): Promise<void> | undefined;
}

/** Creates the scheduler of one step. Throws `ConfigError` on two executors for one type. */
export function createStepScheduler(options: StepSchedulerOptions): StepScheduler {
  return new SchedulerCore(options);
}
