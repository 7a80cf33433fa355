import type { ActionOutcome } from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import type { ActionType } from "../protocol/index.js";
import { SpoolError } from "../spec/index.js";
import type { ExecutorFactory, StepScope } from "./agent-step.js";
import { runSingleAction } from "./single-action.js";

/**
 * One action a composite executor runs inside its own action (a workflow's step), as
 * `StepExecutorScope.runAction` takes it.
 */
export interface InnerAction {
  /**
   * The step stream its events go to. It must be deterministic (replay finds the action's
   * recorded result by it) and never a model step `<thread>:<n>`, so the thread's history never
   * takes the result for the model's: a workflow's inner actions use the workflow's graph id.
   */
  step: string;
  /** The action's id in that step, unique there and deterministic. */
  actionId: string;
  type: ActionType;
  name: string;
  parameters: Record<string, unknown>;
  /**
   * The attempt's limit, started when the action runs (not while it waits its turn in the
   * serial queue): past it the action is `action.timed-out` and rejects with `action.timeout`
   * (retryable). Default none.
   */
  timeoutMs?: number;
  /** Aborting it cancels the action (`action.cancelled`, with the reason's message). */
  signal: AbortSignal;
}

/** What the runtime gives `AgentRuntimeOptions.stepExecutors`: the step, and its action path. */
export interface StepExecutorScope extends StepScope {
  /**
   * Runs one inner action through the path every action takes (`runInnerAction`), with the
   * executors of the agent and thread in force. Resolves with its output; rejects with a
   * `SpoolError` carrying the logged error's code (see `runInnerAction`).
   */
  runAction(action: InnerAction): Promise<unknown>;
}

/** What `runInnerAction` needs. */
export interface InnerActionOptions {
  store: EventStore;
  continuity: string;
  /** The executors of the step that runs the composite action (the session's). */
  executors: ExecutorFactory;
  action: InnerAction;
}

/**
 * Runs an inner action as a `sync` action of its own step (`runSingleAction`): its intent
 * (`action.dispatched`) is durable before anything runs, the directive's permissions are checked
 * at dispatch (a refusal is `action.skipped`, `not-allowed`, and nothing runs), a side effect
 * waits its turn in the continuity's serial queue (never beside another side effect, the
 * model's or another inner action's), and replay serves its recorded result instead of running
 * it.
 *
 * Contract: resolves with the output of an action that succeeded. Anything else rejects with a
 * `SpoolError` whose code is the logged error's (`action.not-allowed`, `action.cancelled`, a
 * tool's own code, …); it is `retryable` when the logged error was (or was a plain error, which
 * says nothing), never for a refusal or a cancel. Never retries by itself.
 */
export async function runInnerAction(options: InnerActionOptions): Promise<unknown> {
  const { action } = options;
  const outcome = await runSingleAction({
    store: options.store,
    continuity: options.continuity,
    step: action.step,
    executors: options.executors,
    action: {
      id: action.actionId,
      type: action.type,
      name: action.name,
      parameters: action.parameters,
      timeoutMs: action.timeoutMs ?? null,
    },
    signal: action.signal,
  });
  if (outcome.status === "succeeded") return outcome.output ?? null;
  throw innerActionError(outcome);
}

/** The error an inner action that did not succeed rejects with (see `runInnerAction`). */
function innerActionError(outcome: ActionOutcome): SpoolError {
  const fallback = `${outcome.type} "${outcome.name}" ended ${outcome.status}`;
  if (outcome.status === "failed" || outcome.status === "timed-out") {
    const error = outcome.error ?? { code: `action.${outcome.status}`, message: fallback };
    return new SpoolError(error.code, error.message, { retryable: error.retryable ?? true });
  }
  const code = outcome.error?.code ?? `action.${outcome.reason ?? outcome.status}`;
  return new SpoolError(code, outcome.message ?? outcome.error?.message ?? fallback);
}
