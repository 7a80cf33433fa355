import {
  type ActionExecutor,
  type CheckedActionExecutor,
  createInternalExecutor,
  createStoreActionLog,
  createToolExecutor,
  createToolRegistry,
  createVariableStore,
  internalActionTable,
  internalVariableActions,
  withInternalActions,
} from "../actions/index.js";
import type { AgentSpec } from "./agent-runtime-types.js";
import type { ExecutorFactory, StepScope } from "./agent-step.js";
import { createAgentExecutor, createLlmExecutor } from "./child-executors.js";
import { spawnChild } from "./child-threads.js";
import { continuityActions } from "./continuity-actions.js";
import type { ContinuitySession } from "./continuity-session.js";
import { gateExecutor } from "./gated-executor.js";
import { runInnerAction, type StepExecutorScope } from "./inner-action.js";
import type { FeedSourcePath } from "./session-feeds.js";

/**
 * The executors of the steps of one run of `thread` (of `spec`, at spawn depth `depth`): every
 * kind of action a step may dispatch (tool, llm, the runtime's own, internal, agent), each gated
 * by the spec's permission check and the session's serial queue for side effects, and routed
 * through the runtime's `intercept` (replay) when it has one, composite executors excepted.
 * `stepExecutors` get a `runAction` that runs an inner action (a workflow's step) through these
 * same executors. What does not change from step to step (the tool registry, the internal
 * action table) is made once per run.
 */
export function sessionExecutors(
  session: ContinuitySession,
  thread: string,
  spec: AgentSpec,
  depth: number,
  signal: AbortSignal,
): ExecutorFactory {
  const { options } = session.shared;
  const registry = createToolRegistry(spec.tools);
  const sideEffects = (name: string) => registry.get(name)?.sideEffects === true;
  const gate = (executor: ActionExecutor | CheckedActionExecutor) =>
    gateExecutor(executor, {
      permits: spec.permits,
      directive: spec.directive,
      sideEffects: executor.type === "tool" ? sideEffects : () => executor.type === "relic",
      serial: session.serial,
    });
  const internalActions = [
    ...internalVariableActions(),
    ...continuityActions({ store: options.store, continuity: session.continuity, thread }),
    ...(session.sources?.actions() ?? []),
    ...(options.internalActions ?? []),
  ];
  // Checked here, so a policy naming an action no table has fails the run before its first
  // step; each step's own table binds the feed actions to that step (replay looks them up by it),
  // under the policy parsed here once.
  const checked = internalActionTable(
    [...internalActions, ...session.feeds.actions("")],
    options.internalActionsPolicy,
  );
  const internal = (step: string) =>
    withInternalActions(checked, [...internalActions, ...session.feeds.actions(step)]);
  const fixed = [
    gate(createToolExecutor(registry)),
    gate(createLlmExecutor({ provider: options.provider, model: options.fastModel ?? spec.model })),
    ...(options.executors ?? []).map(gate),
  ];
  const intercept = (executor: CheckedActionExecutor, step: string) =>
    intercepted(session, executor, step);
  // A composite executor (a workflow) is never intercepted: replay runs it, and intercepts the
  // inner actions it runs through `runAction`, which take this same path.
  const stepExecutor = (executor: ActionExecutor | CheckedActionExecutor, step: string) =>
    options.intercept && !executor.composite ? intercept(gate(executor), step) : gate(executor);
  const factory: ExecutorFactory = (scope: StepScope) => [
    ...(options.intercept ? fixed.map((executor) => intercept(executor, scope.step)) : fixed),
    ...(options.stepExecutors?.(withRunAction(session, scope, factory)) ?? []).map((executor) =>
      stepExecutor(executor, scope.step),
    ),
    createInternalExecutor({
      actions: internal(scope.step),
      variables: scope.variables,
      log: scope.log,
    }),
    gate(
      createAgentExecutor({
        has: (name) => options.agents?.get(name) !== undefined,
        names: () => options.agents?.names() ?? [],
        spawn: (call) =>
          spawnChild(session, { thread, step: scope.step, depth, spec }, call, signal),
      }),
    ),
  ];
  return factory;
}

/** `scope` with `runAction`: inner actions run with `executors`, the step's own executors. */
function withRunAction(
  session: ContinuitySession,
  scope: StepScope,
  executors: ExecutorFactory,
): StepExecutorScope {
  return {
    ...scope,
    runAction: (action) =>
      runInnerAction({
        store: session.shared.options.store,
        continuity: session.continuity,
        executors,
        action,
      }),
  };
}

/**
 * The action path of the session's feed sources: each read is a `sync` action of the feed's own
 * step (`runInnerAction`), run with the executors of the foreground agent (its permissions, the
 * serial queue, replay's intercept), as if its foreground thread had asked for it.
 */
export function feedSourcePath(session: ContinuitySession): FeedSourcePath {
  const { options } = session.shared;
  const executorsFor = (signal: AbortSignal) =>
    sessionExecutors(
      session,
      session.state?.foreground ?? session.continuity,
      options.agent,
      0,
      signal,
    );
  return {
    canRun(type, name) {
      const executors = executorsFor(new AbortController().signal)({
        step: "feed-check",
        log: { record: async () => {} },
        variables: createVariableStore(),
      });
      const executor = executors.find((candidate) => candidate.type === type);
      return executor !== undefined && (executor.canRun?.(name) ?? true);
    },
    run: (action) =>
      runInnerAction({
        store: options.store,
        continuity: session.continuity,
        executors: executorsFor(action.signal),
        action,
      }),
  };
}

/** The foreground agent's tool executor for `step` of `thread` (gated, serialized, intercepted). */
export function sessionToolExecutor(
  session: ContinuitySession,
  thread: string,
  step: string,
): CheckedActionExecutor {
  const log = createStoreActionLog({
    store: session.shared.options.store,
    continuity: session.continuity,
    step,
  });
  const executors = sessionExecutors(
    session,
    thread,
    session.shared.options.agent,
    0,
    new AbortController().signal,
  )({ step, log, variables: createVariableStore() });
  return executors.find((executor) => executor.type === "tool")! as CheckedActionExecutor;
}

/** `executor` with each call offered to the runtime's `intercept` first (replay answers there). */
function intercepted(
  session: ContinuitySession,
  executor: CheckedActionExecutor,
  step: string,
): CheckedActionExecutor {
  const { intercept } = session.shared.options;
  return {
    ...executor,
    // Not `{ ...call }`: an attempt's `signal` and `progress` live on its class, not on the object.
    execute: (call) =>
      intercept?.({
        actionId: call.actionId,
        type: call.type,
        name: call.name,
        parameters: call.parameters,
        attempt: call.attempt,
        signal: call.signal,
        progress: (data) => call.progress(data),
        step,
      }) ?? executor.execute(call),
  };
}
