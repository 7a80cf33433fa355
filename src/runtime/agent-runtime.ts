import { monotonicFactory } from "ulid";
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
} from "../actions/index.js";
import { mergeCoordinationLayers } from "../directives/index.js";
import {
  createModelCatalogue,
  createTokenEstimator,
  emptyUsage,
  toUsageData,
} from "../providers/index.js";
import { SpoolError } from "../spec/index.js";
import { runThreadLoop, type ThreadRunResult } from "./agent-loop.js";
import type { AgentRuntime, AgentRuntimeOptions, AgentSpec } from "./agent-runtime-types.js";
import type { ExecutorFactory, StepScope } from "./agent-step.js";
import { notify } from "./agent-step.js";
import { createAgentExecutor, createLlmExecutor } from "./child-executors.js";
import { createChildSpawner } from "./child-threads.js";
import { continuityActions } from "./continuity-actions.js";
import { ContinuityOwners } from "./continuity-owners.js";
import { loadContinuityState } from "./continuity-state.js";
import { gateExecutor } from "./gated-executor.js";
import { createLane, type Lane, type RunLaneThread, settled } from "./lane.js";
import { createLaneContinuity, inputBudget } from "./lane-continuity.js";
import { createLaneFeeds } from "./lane-feeds.js";
import { nativeTools } from "./native-tools.js";
import { recoverRun } from "./recovery.js";
import { closeInterruptedChild, startRecovery } from "./recovery-start.js";
import { recordRunStop, recordThreadResumed } from "./run-stop.js";
import { runSingleAction } from "./single-action.js";
import { buildSystemPrompt } from "./system-prompt.js";
import { interruptTasks } from "./task-recovery.js";
import { ThreadHistory } from "./thread-history.js";

export type {
  AgentRuntime,
  AgentRuntimeOptions,
  AgentSpec,
  InterceptedCall,
  TurnInput,
} from "./agent-runtime-types.js";
export { fillInputs } from "./lane-continuity.js";

/** Creates the agent runtime over a store and a provider. */
export function createAgentRuntime(given: AgentRuntimeOptions): AgentRuntime {
  const options = given.world ? given.world.enclose(given) : given;
  const { store, provider } = options;
  const catalogue = options.catalogue ?? createModelCatalogue();
  const lanes = new Map<string, Lane>();
  let closed = false;
  /** Every turn's run, by turn id: a turn found twice (in the log and by the follower) runs once. */
  const runs = new Map<string, Promise<ThreadRunResult>>();
  const owners = options.lease
    ? new ContinuityOwners({
        store,
        lease: options.lease,
        onTurn: (continuity, turn, event) => {
          const data = event.data as { text?: unknown };
          notify(options.observer, {
            type: "turn-received",
            continuity,
            turn,
            actor: event.actor ?? "?",
            text: typeof data.text === "string" ? data.text : "",
          });
          void accept(continuity, turn).catch(() => undefined);
        },
        onLost: (continuity) =>
          lanes
            .get(continuity)
            ?.running?.controller.abort("another process took this continuity over"),
      })
    : undefined;
  const newTurnId = monotonicFactory();

  const lane = (continuity: string): Lane => {
    let found = lanes.get(continuity);
    if (!found) {
      found = createLane();
      lanes.set(continuity, found);
    }
    return found;
  };
  const continuation = options.continuation ?? mergeCoordinationLayers([]).continuation;
  // `runThread` is declared below: the lambdas defer the lookup to the first run.
  const { workerOf, driverOf } = createLaneContinuity({
    ...options,
    catalogue,
    continuation,
    runThread: (continuity, current, run) => runThread(continuity, current, run),
    // A hook's tool takes the model's action path: the foreground agent's executors.
    runTool: (continuity, current, call) =>
      runSingleAction({
        store,
        continuity,
        step: call.step,
        executors: executorsFor(
          continuity,
          current,
          call.thread,
          options.agent,
          0,
          new AbortController().signal,
        ),
        action: { id: call.actionId, type: "tool", name: call.name, parameters: call.params },
      }),
  });
  const spawnChild = createChildSpawner({
    ...options,
    driverOf,
    runThread: (continuity, current, run) => runThread(continuity, current, run),
  });
  const stateOf = async (continuity: string, current: Lane) => {
    if (!current.state) {
      const worker = workerOf(continuity, current);
      const driver = driverOf(continuity, current);
      const loaded = await loadContinuityState(store, continuity, (event) => {
        worker.observe(event);
        driver.observe(event);
      });
      current.state ??= loaded.state;
      current.estimator ??=
        options.estimator ?? createTokenEstimator({ catalogue, calibration: loaded.calibration });
      current.background ??= createTokenEstimator({
        catalogue,
        calibration: loaded.backgroundCalibration,
      });
    }
    return current.state;
  };
  const historyOf = (current: Lane, thread: string) => {
    let history = current.histories.get(thread);
    if (!history) {
      // Read from the thread's first message on, not from the continuity's start.
      const known = current.state?.threads.get(thread);
      history = new ThreadHistory(thread, {
        after: known ? Math.max(0, known.readFrom - 1) : 0,
        ...(current.state ? { pinned: current.state.pinned } : {}),
      });
      current.histories.set(thread, history);
    }
    return history;
  };

  /** The executors of one step of a thread of `spec` at spawn depth `depth`. */
  const executorsFor = (
    continuity: string,
    current: Lane,
    thread: string,
    spec: AgentSpec,
    depth: number,
    signal: AbortSignal,
  ): ExecutorFactory => {
    const registry = createToolRegistry(spec.tools);
    const sideEffects = (name: string) => registry.get(name)?.sideEffects === true;
    const gate = (executor: ActionExecutor | CheckedActionExecutor) =>
      gateExecutor(executor, {
        permits: spec.permits,
        directive: spec.directive,
        sideEffects: executor.type === "tool" ? sideEffects : () => executor.type === "relic",
        serial: current.serial,
      });
    const internal = internalActionTable(
      [
        ...internalVariableActions(),
        ...continuityActions({ store, continuity, thread }),
        ...(options.internalActions ?? []),
      ],
      options.internalActionsPolicy,
    );
    const fixed = [
      gate(createToolExecutor(registry)),
      gate(createLlmExecutor({ provider, model: options.fastModel ?? spec.model })),
      ...(options.executors ?? []).map(gate),
    ];
    return (scope: StepScope) => [
      ...(options.intercept ? fixed.map((executor) => intercepted(executor, scope.step)) : fixed),
      ...(options.stepExecutors?.(scope) ?? []).map((executor) =>
        options.intercept ? intercepted(gate(executor), scope.step) : gate(executor),
      ),
      createInternalExecutor({ actions: internal, variables: scope.variables, log: scope.log }),
      gate(
        createAgentExecutor({
          has: (name) => options.agents?.get(name) !== undefined,
          names: () => options.agents?.names() ?? [],
          spawn: (call) =>
            spawnChild(
              continuity,
              current,
              { thread, step: scope.step, depth, spec },
              call,
              signal,
            ),
        }),
      ),
    ];
  };

  /** The foreground agent's tool executor for `step` (gated, serialized, intercepted). */
  const toolExecutor = (continuity: string, current: Lane, thread: string, step: string) => {
    const log = createStoreActionLog({ store, continuity, step });
    const executors = executorsFor(
      continuity,
      current,
      thread,
      options.agent,
      0,
      new AbortController().signal,
    )({ step, log, variables: createVariableStore() });
    return executors.find((executor) => executor.type === "tool")!;
  };

  const intercepted = (executor: CheckedActionExecutor, step: string): CheckedActionExecutor => ({
    ...executor,
    // Not `{ ...call }`: an attempt's `signal` and `progress` live on its class, not on the object.
    execute: (call) =>
      options.intercept?.({
        actionId: call.actionId,
        type: call.type,
        name: call.name,
        parameters: call.parameters,
        attempt: call.attempt,
        signal: call.signal,
        progress: (data) => call.progress(data),
        step,
      }) ?? executor.execute(call),
  });

  const runThread: RunLaneThread = async (continuity, current, run) => {
    const { spec } = run;
    return runThreadLoop({
      store,
      continuity,
      thread: run.thread,
      directive: spec.directive,
      model: spec.model,
      provider,
      system: buildSystemPrompt({
        directive: spec.directive,
        instructions: spec.instructions,
        tools:
          spec.toolsText ??
          spec.tools.map((tool) => `- ${tool.name}: ${tool.description}`).join("\n"),
      }),
      history: historyOf(current, run.thread),
      ...(spec.nativeTools !== false && spec.tools.length > 0
        ? { nativeTools: nativeTools(spec.tools) }
        : {}),
      executors: executorsFor(continuity, current, run.thread, spec, run.depth, run.signal),
      limits: spec.limits,
      catalogue,
      estimator:
        run.estimator ??
        current.estimator ??
        options.estimator ??
        createTokenEstimator({ catalogue }),
      nextStep: run.nextStep,
      knownArtifacts: current.artifacts,
      tasks: current.tasks,
      ...(run.turn ? { turn: run.turn } : {}),
      ...(run.input !== undefined ? { input: run.input } : {}),
      ...(run.resumed ? { resumed: true } : {}),
      ...(options.signer ? { signer: options.signer } : {}),
      ...(options.observer && run.depth === 0 ? { observer: options.observer } : {}),
      signal: run.signal,
      ...(options.random ? { random: options.random } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(run.depth === 0
        ? {
            lifecycle: driverOf(continuity, current).lifecycle({
              directive: spec.directive,
              model: spec.model,
              ...(spec.manifest !== undefined ? { agent: spec.manifest } : {}),
              ...(catalogue.lookup(spec.model) ? { info: catalogue.lookup(spec.model)! } : {}),
              budget: inputBudget(catalogue, spec.model),
              handoff: true,
            }),
            summaryTokens: continuation.summaryMaxTokens,
            feeds: (step: string) => feedsOf(continuity, current).read(step),
          }
        : {}),
    });
  };

  const feedsOf = (continuity: string, current: Lane) => {
    current.feeds ??= createLaneFeeds({
      store,
      continuity,
      ...(options.feeds ? { feeds: options.feeds } : {}),
      ...(options.recordedFeeds ? { recorded: options.recordedFeeds } : {}),
    });
    return current.feeds;
  };

  const runTurnNow = async (continuity: string, current: Lane, turn: string) => {
    current.takenUp = true;
    const state = await stateOf(continuity, current);
    let thread = state.foreground;
    if (thread === undefined || state.threads.get(thread)?.ended !== undefined) {
      const previous = thread !== undefined ? current.histories.get(thread) : undefined;
      thread = `th-${turn}`;
      current.histories.set(
        thread,
        previous
          ? previous.successor(thread)
          : new ThreadHistory(thread, {
              after: Math.max(0, (state.turnSeqs.get(turn) ?? 1) - 1),
              pinned: state.pinned,
            }),
      );
      await store.append({
        continuity,
        stream: { kind: "thread", id: thread },
        type: "thread.started",
        data: {
          directive: options.agent.directive,
          chain_root: thread,
          model: options.agent.model,
          turn,
          ...(options.agent.manifest !== undefined ? { agent: options.agent.manifest } : {}),
        },
      });
      state.threads.set(thread, {
        id: thread,
        directive: options.agent.directive,
        startSeq: 0,
        readFrom: 0,
        nextStep: 0,
      });
      state.foreground = thread;
      await driverOf(continuity, current).fire(
        "thread.started",
        { thread, directive: options.agent.directive },
        thread,
      );
    }
    const info = state.threads.get(thread)!;
    await recordThreadResumed(store, continuity, info, turn);
    const controller = new AbortController();
    current.running = { controller, thread };
    try {
      const result = await runThread(continuity, current, {
        thread,
        spec: options.agent,
        depth: 0,
        nextStep: info.nextStep,
        turn,
        signal: controller.signal,
      });
      (state.threads.get(result.thread) ?? info).nextStep = result.nextStep;
      await stopped(continuity, current, result, controller.signal);
      return result;
    } finally {
      current.running = undefined;
    }
  };

  /** A foreground run that stopped short suspends or cancels its thread (hooks may answer). */
  const stopped = (
    continuity: string,
    current: Lane,
    result: Pick<ThreadRunResult, "thread" | "status">,
    signal?: AbortSignal,
  ) =>
    recordRunStop({
      store,
      continuity,
      driver: driverOf(continuity, current),
      directive: options.agent.directive,
      result,
      ...(signal ? { signal } : {}),
      ...(current.state?.threads.get(result.thread)
        ? { thread: current.state.threads.get(result.thread)! }
        : {}),
    });

  const enqueue = (continuity: string, turn: string): Promise<ThreadRunResult> => {
    if (closed) return Promise.reject(new SpoolError("runtime.closed", "the runtime is closed"));
    const known = runs.get(turn);
    if (known !== undefined) return known;
    const current = lane(continuity);
    current.waiting += 1;
    const result = current.chain.then(async () => {
      current.waiting -= 1;
      return runTurnNow(continuity, current, turn);
    });
    current.chain = result.catch(() => undefined);
    runs.set(turn, result);
    return result;
  };

  const resumeNow = async (continuity: string, current: Lane): Promise<ThreadRunResult[]> => {
    const takingUp = !current.takenUp;
    current.takenUp = true;
    current.state = undefined;
    const state = await stateOf(continuity, current);
    const results: ThreadRunResult[] = [];
    const tasks = [...state.openTasks.keys()].filter((stream) => !current.tasks.running(stream));
    const driver = driverOf(continuity, current);
    // The restart and what it found open are logged before anything is recovered; a cut-off
    // handoff is done again by the next step, into the same continuation id.
    await startRecovery({
      store,
      continuity,
      state,
      takingUp,
      tasks,
      hookActions: driver.interruptedHookActions(),
    });
    await interruptTasks(store, continuity, state, tasks);
    await driver.recoverHookActions();
    for (const thread of state.threads.values()) {
      if (!thread.openRun) continue;
      if (thread.parent) {
        await closeInterruptedChild(store, continuity, thread.id);
        delete thread.openRun;
        continue;
      }
      if (thread.id !== state.foreground) continue;
      const recovery = await recoverRun({
        store,
        continuity,
        thread: thread.id,
        since: thread.openRun.seq,
        tools: options.agent.tools,
        // A re-run takes the model's action path too: the serial queue and replay's intercept.
        execute: (tool, call) =>
          toolExecutor(continuity, current, thread.id, call.step).execute({
            actionId: call.actionId,
            type: "tool",
            name: tool.name,
            parameters: call.parameters,
            attempt: call.attempt,
            signal: call.signal,
            progress: () => {},
          }),
      });
      delete thread.openRun;
      thread.nextStep = recovery.nextStep;
      if (recovery.next === "end") {
        await store.append({
          continuity,
          stream: { kind: "thread", id: thread.id },
          type: "run.completed",
          data: {
            status: recovery.status ?? "completed",
            steps: 0,
            usage: toUsageData(emptyUsage()),
            cost_usd: 0,
          },
        });
        await stopped(continuity, current, {
          thread: thread.id,
          status: recovery.status ?? "completed",
        });
        continue;
      }
      const controller = new AbortController();
      current.running = { controller, thread: thread.id };
      try {
        const result = await runThread(continuity, current, {
          thread: thread.id,
          spec: options.agent,
          depth: 0,
          nextStep: recovery.nextStep,
          resumed: true,
          signal: controller.signal,
        });
        thread.nextStep = result.nextStep;
        await stopped(continuity, current, result, controller.signal);
        results.push(result);
      } finally {
        current.running = undefined;
      }
    }
    for (const turn of [...state.waitingTurns]) {
      if (runs.has(turn)) continue; // the follower queued it already: it runs after this
      const run = runTurnNow(continuity, current, turn);
      runs.set(turn, run);
      results.push(await run);
    }
    return results;
  };

  /** Queues (or lets interrupt) the run of a turn already appended. */
  const accept = async (continuity: string, turn: string): Promise<ThreadRunResult> => {
    await owners?.own(continuity);
    const known = runs.get(turn);
    if (known !== undefined) return known;
    const current = lane(continuity);
    if (current.running) {
      if (options.concurrency === "interrupt") {
        current.running.controller.abort(`interrupted by a new turn (${turn})`);
      } else {
        // Queued before the event is logged: a turn accepted while this one's event is being
        // written counts it, as it would a moment later (replay accepts turns back to back).
        const position = current.waiting + 1;
        const { thread } = current.running;
        const queued = enqueue(continuity, turn);
        await store.append({
          continuity,
          type: "turn.queued",
          data: { turn, behind: thread, position },
        });
        notify(options.observer, { type: "queued", turn, position });
        return queued;
      }
    }
    return enqueue(continuity, turn);
  };

  return {
    async resume(continuity) {
      await owners?.own(continuity);
      const current = lane(continuity);
      const result = current.chain.then(() => resumeNow(continuity, current));
      current.chain = result.catch(() => undefined);
      return result;
    },
    async submit(continuity, input) {
      let id: string | undefined;
      if (owners) {
        await owners.own(continuity);
        id = newTurnId();
        owners.markOwn(id);
      }
      const event = await store.append({
        ...(id !== undefined ? { id } : {}),
        continuity,
        type: "turn.added",
        actor: input.actor,
        origin: input.origin,
        data: { text: input.text },
      });
      return accept(continuity, event.id);
    },
    accept,
    async runTurn(continuity, turn) {
      await owners?.own(continuity);
      return enqueue(continuity, turn);
    },
    cancel(continuity, reason = "cancelled by the user") {
      lanes.get(continuity)?.running?.controller.abort(reason);
    },
    async idle(continuity) {
      const current = lanes.get(continuity);
      if (current) await current.chain;
    },
    async settled(continuity) {
      const current = lanes.get(continuity);
      if (current) await settled(current);
    },
    state: (continuity) => stateOf(continuity, lane(continuity)),
    async close() {
      closed = true;
      for (const current of lanes.values()) current.running?.controller.abort("the runtime closed");
      await Promise.all(
        [...lanes.values()].map((current) => current.tasks.cancel("the runtime closed")),
      );
      // Background work (summaries, hooks' actions) is let finish: each is bounded by its
      // timeout, and a cut-off summary would be work lost (and a log replay could not re-derive).
      await Promise.all([...lanes.values()].map(settled));
      await Promise.all([...lanes.values()].map((current) => current.feeds?.stop()));
      await owners?.close();
    },
  };
}
