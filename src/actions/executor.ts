import type { ActionType } from "../protocol/index.js";

/** What an executor is given for one attempt of one action. */
export interface ActionCall {
  /** The action's id in its step. */
  actionId: string;
  type: ActionType;
  /** The tool, agent, relic, workflow, model task or internal action to run. */
  name: string;
  /** Parameters with every `$name` reference already substituted. */
  parameters: Record<string, unknown>;
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number;
  /**
   * Aborted when the attempt times out or the step that owns it is cancelled. An executor must
   * stop its work and settle soon after; the scheduler stops waiting at once either way.
   */
  signal: AbortSignal;
  /** Streams a partial result (logged as droppable `action.progress`). */
  progress(data: unknown): void;
}

/**
 * Runs actions of one kind (`tool`, `agent`, `relic`, `workflow`, `llm`, `internal`).
 *
 * Contract: `execute` resolves with the action's output (any JSON value) or rejects; a rejection
 * with a `SpoolError` keeps its `code` and `retryable` in the log, anything else is recorded as
 * `action.error`. `canRun` lets the scheduler refuse an unknown name before dispatch (an
 * `action.skipped` with reason `unknown-executor`) instead of failing at run time.
 */
export interface ActionExecutor {
  readonly type: ActionType;
  /**
   * True for an executor that reaches nothing outside by itself: each effect it has is an inner
   * action it hands back to the runtime to run (a workflow's steps, through
   * `StepExecutorScope.runAction`), which logs, gates, serializes and intercepts each one. Replay
   * runs such an executor, so its own decisions are re-derived, and serves only its inner
   * actions from the log; any other executor's result replay serves whole. Default false.
   */
  readonly composite?: boolean;
  /** False when this executor has nothing called `name`; defaults to true when absent. */
  canRun?(name: string): boolean;
  execute(call: ActionCall): Promise<unknown>;
}
