import {
  type ActionOutcome,
  createStepScheduler,
  createStoreActionLog,
  createVariableStore,
} from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import type { ActionRequest } from "../protocol/index.js";
import type { ExecutorFactory } from "./agent-step.js";

/** What `runSingleAction` needs. */
export interface SingleActionOptions {
  store: EventStore;
  continuity: string;
  /**
   * The step stream the action's events go to. It must not be a model step of a thread
   * (`<thread>:<n>`): a hook's action is named `<thread>@hook<n>`, so the thread's history never
   * takes its result for a result of the model's.
   */
  step: string;
  /**
   * The executors of the agent in force, made for this step: the same factory a model step gets
   * (permission gate, serial side-effect queue, replay interception).
   */
  executors: ExecutorFactory;
  /** What to run; `mode` is `sync`, `depends_on` empty. */
  action: {
    id: string;
    type: ActionRequest["type"];
    name: string;
    parameters: Record<string, unknown>;
    /**
     * Per-attempt limit (default 60 000 ms); `null` for none, when the caller keeps the time
     * itself and aborts `signal` (a workflow step's `timeout_ms`).
     */
    timeoutMs?: number | null;
  };
  /**
   * Aborting it cancels the action (`action.cancelled`, with the abort reason's message when the
   * reason is an error).
   */
  signal?: AbortSignal;
}

/**
 * Runs one action outside a model's step (a hook's tool) through the scheduler the model's
 * actions go through: its intent (`action.dispatched`) is durable before the executor is
 * called, the executor's permission check refuses what the directive in force does not allow
 * (`action.skipped`, `not-allowed`), side effects wait their turn in the continuity's serial
 * queue, replay serves the logged result instead of running it, and `action.succeeded` /
 * `action.failed` / `action.timed-out` follow. Resolves with the action's outcome; never
 * rejects for anything the action does (a log write that fails rejects).
 */
export async function runSingleAction(options: SingleActionOptions): Promise<ActionOutcome> {
  const { store, continuity, step, action } = options;
  const log = createStoreActionLog({ store, continuity, step });
  const variables = createVariableStore();
  const scheduler = createStepScheduler({
    log,
    executors: options.executors({ step, log, variables }),
    variables,
    // A hook runs once; the hook answers its failure (no retries hidden behind it).
    defaultRetries: 0,
  });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    void scheduler.cancel(cancelReason(options.signal?.reason));
  };
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    const position = { offset: 0, line: 1, column: 1 };
    await scheduler.submit({
      id: action.id,
      type: action.type,
      mode: "sync",
      name: action.name,
      parameters: action.parameters,
      dependsOn: [],
      ...(action.timeoutMs !== null ? { timeoutMs: action.timeoutMs ?? 60_000 } : {}),
      retry: 0,
      onError: "fail",
      inThought: false,
      span: { start: position, end: position },
    });
    // Aborted before it could listen: the action is cancelled as soon as it was dispatched.
    if (options.signal?.aborted) stop();
    scheduler.end();
    const outcome = await scheduler.settled();
    const ended = outcome.actions.find((item) => item.id === action.id);
    if (ended) return ended;
    // Refused before dispatch (an unknown tool): the step error says why.
    const error = outcome.errors.find((item) => item.actionId === action.id);
    return {
      id: action.id,
      type: action.type,
      mode: "sync",
      name: action.name,
      status: "skipped",
      attempts: 0,
      ...(error ? { message: error.message } : {}),
    };
  } finally {
    options.signal?.removeEventListener("abort", stop);
  }
}

/** Why the action was cancelled: the abort reason's message when it is an error. */
function cancelReason(reason: unknown): string {
  return reason instanceof Error && reason.message !== ""
    ? reason.message.slice(0, 2000)
    : "the run this action served was stopped";
}
