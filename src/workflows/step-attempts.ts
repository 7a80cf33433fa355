import {
  type BackoffPolicy,
  backoffDelay,
  mayRetry,
  type SchedulerClock,
} from "../actions/index.js";
import { WorkflowError } from "./workflow-error.js";

/** How the attempts of one step (or one item of a `foreach` step) ended. */
export type AttemptsOutcome =
  | { kind: "succeeded"; output: unknown; attempts: number }
  | { kind: "failed"; error: unknown; attempts: number }
  | { kind: "cancelled" };

/** Limits and environment of `runStepAttempts`. */
export interface StepAttemptsOptions {
  /** Further attempts after a failure. */
  retries: number;
  /** Limit of one attempt; its signal aborts and the attempt fails with `workflow.timeout`. */
  timeoutMs: number | undefined;
  /** The workflow's signal: aborting it ends the attempts at once as `cancelled`. */
  signal: AbortSignal;
  clock: SchedulerClock;
  backoff: BackoffPolicy;
  random: () => number;
}

type AttemptResult =
  | { kind: "succeeded"; output: unknown }
  | { kind: "failed"; error: unknown }
  | { kind: "cancelled" };

/**
 * Runs `attempt` until it succeeds, up to `1 + retries` times, waiting `backoffDelay` on the
 * clock between attempts. A `SpoolError` that says `retryable: false` is not retried.
 *
 * Contract: never rejects. Stops waiting the instant an attempt times out or `signal` aborts,
 * whether or not `attempt` honours its own signal (which is aborted either way); a late result
 * of an abandoned attempt is ignored. Waits only through the clock.
 */
export async function runStepAttempts(
  attempt: (signal: AbortSignal, attempt: number) => Promise<unknown>,
  options: StepAttemptsOptions,
): Promise<AttemptsOutcome> {
  for (let n = 1; ; n++) {
    if (options.signal.aborted) return { kind: "cancelled" };
    const result = await oneAttempt(attempt, n, options);
    if (result.kind === "cancelled") return result;
    if (result.kind === "succeeded") return { ...result, attempts: n };
    if (n > options.retries || !mayRetry(result.error)) {
      return { kind: "failed", error: result.error, attempts: n };
    }
    if (!(await wait(options, backoffDelay(n, options.backoff, options.random)))) {
      return { kind: "cancelled" };
    }
  }
}

function oneAttempt(
  attempt: (signal: AbortSignal, attempt: number) => Promise<unknown>,
  n: number,
  options: StepAttemptsOptions,
): Promise<AttemptResult> {
  return new Promise((resolve) => {
    const controller = new AbortController();
    let done = false;
    let cancelTimer: (() => void) | undefined;
    const finish = (result: AttemptResult) => {
      if (done) return;
      done = true;
      cancelTimer?.();
      options.signal.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const onAbort = () => {
      controller.abort(options.signal.reason);
      finish({ kind: "cancelled" });
    };
    options.signal.addEventListener("abort", onAbort, { once: true });
    const { timeoutMs } = options;
    if (timeoutMs !== undefined) {
      cancelTimer = options.clock.setTimer(timeoutMs, () => {
        const error = new WorkflowError(
          "workflow.timeout",
          `attempt ${n} ran past its timeout of ${timeoutMs} ms`,
          { retryable: true, hint: "Raise the step's timeout_ms, or make the action faster" },
        );
        controller.abort(error);
        finish({ kind: "failed", error });
      });
    }
    let running: Promise<unknown>;
    try {
      running = Promise.resolve(attempt(controller.signal, n));
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (output) => finish({ kind: "succeeded", output }),
      (error: unknown) => finish({ kind: "failed", error }),
    );
  });
}

/** Resolves true after `ms` on the clock, or false at once when `signal` aborts. */
function wait(options: StepAttemptsOptions, ms: number): Promise<boolean> {
  const { signal } = options;
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    let cancel: (() => void) | undefined;
    const onAbort = () => {
      cancel?.();
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    cancel = options.clock.setTimer(ms, () => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    });
  });
}
