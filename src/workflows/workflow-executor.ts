import {
  type ActionCall,
  type BackoffPolicy,
  type CheckedActionExecutor,
  DEFAULT_BACKOFF,
  type SchedulerClock,
  systemClock,
  taskStreamId,
} from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import { describeError, SpoolError } from "../spec/index.js";
import type { WorkflowDefinition } from "./workflow-definition.js";
import { WorkflowError } from "./workflow-error.js";
import { resolveWorkflowInputs } from "./workflow-inputs.js";
import { runWorkflowGraph, type WorkflowInnerCall } from "./workflow-run.js";

/** Options of `createWorkflowExecutor`. */
export interface WorkflowExecutorOptions {
  store: EventStore;
  continuity: string;
  /**
   * The workflow called `name`, validated (`parseWorkflow`, `readWorkflowFile`, or a
   * `WorkflowDirectory`). Rejects (ideally with `workflow.unknown`) when there is none.
   */
  loadWorkflow(name: string): WorkflowDefinition | Promise<WorkflowDefinition>;
  /** The workflows there are: makes `canRun` refuse other names before dispatch. */
  names?(): readonly string[];
  /**
   * Runs one inner action through the runtime's action path (`StepExecutorScope.runAction`:
   * intent logged on `call.step` as `call.actionId`, permission checked, side effects
   * serialized, replay intercepted). Honours `signal`. Whatever it rejects with fails the
   * attempt (a `SpoolError` keeps its code and `retryable`). It must reach nothing by itself:
   * the executor says it is `composite`, so replay runs the workflow and trusts `run` to serve
   * each inner action from the log.
   */
  run(call: WorkflowInnerCall): Promise<unknown>;
  /**
   * The step that owns the workflow actions, for the task stream id
   * `taskStreamId(step, actionId)` (with `@<attempt>` after the action id from the second
   * attempt on). Default `workflow`: pass the step id when the executor is made per step.
   */
  step?: string;
  /** Overrides the task stream id (it is also the graph id); must be deterministic. */
  taskStream?(call: ActionCall): string;
  /**
   * Who keeps a step's `timeout_ms` (see `WorkflowGraphOptions.timeouts`): `engine` (default),
   * or `run` when `run` is the runtime's `runAction`, whose scheduler starts the time when the
   * action runs, not while it waits behind another side effect.
   */
  timeouts?: "engine" | "run";
  /** Timers for step timeouts and retry backoff (default the system clock). */
  clock?: SchedulerClock;
  /** Jitter source for backoff, [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Retry backoff of steps (default `DEFAULT_BACKOFF`). */
  backoff?: Partial<BackoffPolicy>;
}

/**
 * The executor of `type="workflow"` actions: the action's `name` is the workflow, its
 * `parameters` are the workflow's inputs, and its output is the workflow's `output`.
 *
 * Contract: `execute` loads the workflow, checks the inputs (`workflow.bad-inputs`, before any
 * event), then runs the graph as `runWorkflowGraph` describes, recording its events on the task
 * stream `taskStream(call)`, which is deterministic so a replay finds the same stream, and
 * handing each inner action to `run`. It is `composite`: replay runs it again. The
 * action's signal cancels the workflow (`graph.cancelled`). Every rejection is a `SpoolError`
 * with `retryable: false`, since steps that finished had their effects.
 */
export function createWorkflowExecutor(options: WorkflowExecutorOptions): CheckedActionExecutor {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const backoff: BackoffPolicy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const streamOf =
    options.taskStream ??
    ((call: ActionCall) =>
      taskStreamId(
        options.step ?? "workflow",
        call.attempt > 1 ? `${call.actionId}@${call.attempt}` : call.actionId,
      ));
  const names = options.names;
  return {
    type: "workflow",
    // Its effects are its steps' inner actions, which `run` hands to the runtime.
    composite: true,
    ...(names ? { canRun: (name: string) => names().includes(name), names } : {}),
    async execute(call: ActionCall) {
      let definition: WorkflowDefinition;
      try {
        definition = await options.loadWorkflow(call.name);
      } catch (error) {
        if (error instanceof SpoolError) throw error;
        throw new WorkflowError(
          "workflow.unknown",
          `workflow "${call.name}" could not be loaded: ${describeError(error)}`,
          { cause: error, ...(names ? { hint: `Use one of: ${names().join(", ")}` } : {}) },
        );
      }
      const inputs = resolveWorkflowInputs(definition, call.parameters);
      return runWorkflowGraph({
        store: options.store,
        continuity: options.continuity,
        stream: { kind: "task", id: streamOf(call) },
        definition,
        inputs,
        run: options.run,
        ...(options.timeouts ? { timeouts: options.timeouts } : {}),
        signal: call.signal,
        clock,
        backoff,
        random,
      });
    },
  };
}
