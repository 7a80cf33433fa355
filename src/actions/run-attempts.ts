import { SpoolError } from "../spec/index.js";
import { toActionError } from "./action-error.js";
import { type BackoffPolicy, backoffDelay } from "./backoff.js";
import type { SchedulerClock } from "./clock.js";
import type { ActionCall, ActionExecutor } from "./executor.js";
import { LazyAbort } from "./lazy-abort.js";
import type { SerialQueue } from "./serial-queue.js";
import type { ActionErrorData } from "./step-outcome.js";

/** How the attempts of one action ended. `error` is the last attempt's. */
export type AttemptsResult =
  | { kind: "succeeded"; output: unknown; attempt: number; durationMs: number }
  | { kind: "failed"; error: ActionErrorData; attempt: number; durationMs: number }
  | { kind: "timed-out"; attempt: number; durationMs: number; timeoutMs: number }
  | { kind: "cancelled" };

type AttemptResult =
  | Exclude<AttemptsResult, { kind: "failed" }>
  | {
      kind: "failed";
      error: ActionErrorData;
      thrown: unknown;
      attempt: number;
      durationMs: number;
    };

/** The action whose attempts run: what to call, and where the non-terminal events go. */
export interface AttemptHost {
  readonly actionId: string;
  readonly request: { type: ActionCall["type"]; name: string };
  readonly executor: ActionExecutor;
  /** Substituted parameters. */
  readonly parameters: Record<string, unknown>;
  /** 1 + the retries allowed. */
  readonly maxAttempts: number;
  readonly timeoutMs: number | undefined;
  /** The queue each attempt waits its turn in before it starts (a side effect), if any. */
  readonly serial: SerialQueue | undefined;
  /**
   * The action's controller: a single-attempt action hands its signal to the executor as is;
   * with retries each attempt gets its own. The owner aborts it to cancel, then calls
   * `interrupt`.
   */
  readonly controller: LazyAbort;
  /** Set while an attempt or a backoff wait is under way: stops that wait at once. */
  interrupt: (() => void) | undefined;
  attemptStarted(attempt: number): void;
  attemptProgress(attempt: number, data: unknown): void;
  /** A timed-out attempt that a retry follows. */
  attemptTimedOut(attempt: number, durationMs: number, timeoutMs: number): void;
  attemptRetrying(
    attempt: number,
    error: ActionErrorData,
    delayMs: number,
    durationMs: number,
  ): void;
}

/** Time, backoff and the retry rule, shared by every action of a scheduler. */
export interface AttemptEnvironment {
  clock: SchedulerClock;
  backoff: BackoffPolicy;
  random: () => number;
  /** Whether a failure may be retried (see `mayRetry`). */
  mayRetry(error: unknown): boolean;
}

/**
 * Runs an action's attempts: each with its own time limit; after a failure or a timeout, waits
 * the backoff delay and tries again while attempts are left and the error may be retried.
 * Returns how the last attempt ended; the caller records the terminal event.
 *
 * Contract: never rejects (executor errors, synchronous throws included, become results).
 * Stops waiting the instant an attempt times out or the host is interrupted, whether or not the
 * executor honours its signal; a late result of an abandoned attempt is ignored. Each attempt
 * reports `attemptStarted` just before the executor is called. An action with a `serial` queue
 * waits its turn before each attempt: the attempt's timeout and duration count from the moment it
 * is admitted, and a cancel while it waits ends it without a call. Waits only through the clock.
 */
export async function runAttempts(
  host: AttemptHost,
  env: AttemptEnvironment,
): Promise<AttemptsResult> {
  for (let attempt = 1; ; attempt++) {
    if (host.controller.aborted) return { kind: "cancelled" };
    const result = await new Attempt(host, env, attempt).result;
    if (result.kind === "succeeded" || result.kind === "cancelled") return result;
    const retry =
      attempt < host.maxAttempts && (result.kind === "timed-out" || env.mayRetry(result.thrown));
    if (!retry) {
      if (result.kind === "timed-out") return result;
      const { error, durationMs } = result;
      return { kind: "failed", error, attempt, durationMs };
    }
    const delayMs = backoffDelay(attempt, env.backoff, env.random);
    if (result.kind === "timed-out") {
      host.attemptTimedOut(attempt, result.durationMs, result.timeoutMs);
      host.attemptRetrying(attempt, timeoutError(result.timeoutMs), delayMs, result.durationMs);
    } else {
      host.attemptRetrying(attempt, result.error, delayMs, result.durationMs);
    }
    if (!(await wait(host, env.clock, delayMs))) return { kind: "cancelled" };
  }
}

function timeoutError(timeoutMs: number): ActionErrorData {
  return {
    code: "action.timeout",
    message: `the attempt ran past its timeout of ${timeoutMs} ms`,
    retryable: true,
  };
}

/** One attempt: the call the executor sees, and the race of its result, timeout and interrupt. */
class Attempt implements ActionCall {
  readonly actionId: string;
  readonly type: ActionCall["type"];
  readonly name: string;
  readonly parameters: Record<string, unknown>;
  readonly attempt: number;
  readonly result: Promise<AttemptResult>;
  readonly #host: AttemptHost;
  readonly #clock: SchedulerClock;
  readonly #controller: LazyAbort;
  #startedAt: number;
  #resolve!: (result: AttemptResult) => void;
  #done = false;
  #cancelTimer: (() => void) | undefined;

  constructor(host: AttemptHost, env: AttemptEnvironment, attempt: number) {
    this.actionId = host.actionId;
    this.type = host.request.type;
    this.name = host.request.name;
    this.parameters = host.parameters;
    this.attempt = attempt;
    this.#host = host;
    this.#clock = env.clock;
    // No extra controller on the common path (one attempt): abort signals are not free.
    this.#controller = host.maxAttempts === 1 ? host.controller : new LazyAbort();
    this.#startedAt = env.clock.now();
    this.result = new Promise<AttemptResult>((resolve) => {
      this.#resolve = resolve;
    });
    host.interrupt = () => {
      if (this.#controller !== host.controller) this.#controller.abort(host.controller.reason);
      this.#finish({ kind: "cancelled" });
    };
    const serial = host.serial;
    if (serial === undefined) {
      this.#begin(undefined);
      return;
    }
    // A side effect waits its turn first: its time limit and `action.started` begin when it runs.
    void serial.acquire().then((release) => {
      if (this.#done) release();
      else this.#begin(release);
    });
  }

  /** Starts the attempt proper: its timer, `action.started`, the executor's call. */
  #begin(release: (() => void) | undefined): void {
    const host = this.#host;
    const attempt = this.attempt;
    this.#startedAt = this.#clock.now();
    const timeoutMs = host.timeoutMs;
    if (timeoutMs !== undefined) {
      this.#cancelTimer = this.#clock.setTimer(timeoutMs, () => {
        if (this.#done) return;
        this.#controller.abort(
          new SpoolError("action.timeout", `attempt ${attempt} ran past ${timeoutMs} ms`, {
            retryable: true,
          }),
        );
        this.#finish({ kind: "timed-out", attempt, durationMs: this.#elapsed(), timeoutMs });
      });
    }
    // Recorded before the call, so whatever the executor logs (progress, an internal action's
    // variable.set) follows it in the log.
    host.attemptStarted(attempt);
    let running: Promise<unknown>;
    try {
      running = Promise.resolve(host.executor.execute(this));
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (output) => this.#finish({ kind: "succeeded", output, attempt, durationMs: this.#elapsed() }),
      (thrown: unknown) =>
        this.#finish({
          kind: "failed",
          error: toActionError(thrown),
          thrown,
          attempt,
          durationMs: this.#elapsed(),
        }),
    );
    // The turn is handed on when the call itself settles, not when the attempt is given up
    // (timeout, cancel): two side effects never overlap, even when one ignores its signal.
    if (release) running.then(release, release);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Bound: executors may pass `progress` around on its own. */
  readonly progress = (data: unknown): void => {
    if (!this.#done) this.#host.attemptProgress(this.attempt, data);
  };

  #elapsed(): number {
    return this.#clock.now() - this.#startedAt;
  }

  #finish(result: AttemptResult): void {
    if (this.#done) return;
    this.#done = true;
    this.#cancelTimer?.();
    this.#host.interrupt = undefined;
    this.#resolve(result);
  }
}

/** Resolves true after `ms` on the clock, or false at once when the host is interrupted. */
function wait(host: AttemptHost, clock: SchedulerClock, ms: number): Promise<boolean> {
  if (host.controller.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const cancel = clock.setTimer(ms, () => {
      host.interrupt = undefined;
      resolve(true);
    });
    host.interrupt = () => {
      cancel();
      resolve(false);
    };
  });
}
