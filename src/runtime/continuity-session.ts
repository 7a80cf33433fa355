import { SerialQueue, TaskSet } from "../actions/index.js";
import type { SummaryWorker } from "../continuity/index.js";
import { createTokenEstimator, type TokenEstimator } from "../providers/index.js";
import { StoreError } from "../spec/index.js";
import { ThreadFiles } from "../transcript/index.js";
import { runThreadLoop } from "./agent-loop.js";
import type { ThreadRunResult } from "./agent-loop-types.js";
import { notify } from "./agent-step.js";
import type { ContinuityDriver } from "./continuity-driver.js";
import { type ContinuityState, loadContinuityState } from "./continuity-state.js";
import { nativeTools } from "./native-tools.js";
import { recordRunStop, recordThreadResumed } from "./run-stop.js";
import { createSessionDriver, createSessionWorker, inputBudget } from "./session-continuity.js";
import { feedSourcePath, sessionExecutors } from "./session-executors.js";
import { createSessionFeeds, type SessionFeeds, type StepFeeds } from "./session-feeds.js";
import { SessionMemory, turnInput } from "./session-memory.js";
import { SessionSources } from "./session-sources.js";
import type { RuntimeShared, SessionRun } from "./session-types.js";
import { SessionWindows } from "./session-windows.js";
import { buildSystemPrompt } from "./system-prompt.js";
import { screenshotsOf, ThreadHistory } from "./thread-history.js";

/** The memory tool's name: its presence is recorded on `thread.started` for replay. */
const MEMORY_SEARCH = "memory.search";

export type { RuntimeShared, SessionRun } from "./session-types.js";

/**
 * The one owner of a continuity inside a runtime: what the runtime knows of it (state and thread
 * histories, loaded from the log at first touch) and everything that acts on it. The foreground
 * run, child agents, summarizers, hooks' directives and tools, and tasks all go through it: one
 * chain of runs (one at a time), one serial queue for side effects, one task set, one continuity
 * driver. Fields are explicit; the parts made on first use are getters.
 */
export class ContinuitySession {
  readonly continuity: string;
  readonly shared: RuntimeShared;
  /** The runs of turns, one at a time: each waits for the one before. */
  chain: Promise<unknown> = Promise.resolve();
  /** Turns queued on the chain and not started. */
  waiting = 0;
  /**
   * The foreground run going on, and how to cancel it; `ended` once its final `run.completed`
   * was issued (it still finishes up: the hooks of a stop, its result).
   */
  running: { controller: AbortController; thread: string; ended: boolean } | undefined;
  /** The continuity's state, folded from the log at first touch (and again at each resume). */
  state: ContinuityState | undefined;
  /** The foreground estimator, calibrated from this continuity's log alone (so replay agrees). */
  estimator: TokenEstimator | undefined;
  /** Thread histories, by thread id, caught up from the log before each step. */
  readonly histories = new Map<string, ThreadHistory>();
  /** Side effects of every thread and hook of the continuity, one at a time. */
  readonly serial = new SerialQueue();
  /** Its `fire_and_forget` actions, which outlive their step and run (see `TaskSet`). */
  readonly tasks = new TaskSet();
  /** Artifacts stored already (a step whose system prompt did not change stores none). */
  readonly artifacts = new Set<string>();
  /**
   * This runtime has taken the continuity up (resumed it or run a turn on it). A `resume` that
   * takes up a continuity another runtime ran logs that restart (`recovery.started`).
   */
  takenUp = false;
  /** The actor of the turn the foreground runs now: whose memory a thread's recall searches. */
  actor: string | undefined;
  #background: TokenEstimator | undefined;
  #worker: SummaryWorker | undefined;
  #driver: ContinuityDriver | undefined;
  #feeds: SessionFeeds | undefined;
  #memory: SessionMemory | undefined;
  #files: ThreadFiles | undefined;
  #windows: SessionWindows | undefined;
  #sources: SessionSources | undefined;
  #closing: Promise<void> | undefined;

  constructor(continuity: string, shared: RuntimeShared) {
    this.continuity = continuity;
    this.shared = shared;
  }

  /** The estimator of background threads (summarizers, hooks' directives). */
  get background(): TokenEstimator {
    this.#background ??= createTokenEstimator({ catalogue: this.shared.catalogue });
    return this.#background;
  }

  /** The summary worker; its summarizers run as background threads of this session. */
  get worker(): SummaryWorker {
    this.#worker ??= createSessionWorker(this);
    return this.#worker;
  }

  /** The continuity driver: pressure, hooks, summaries and handoffs. */
  get driver(): ContinuityDriver {
    this.#driver ??= createSessionDriver(this);
    return this.#driver;
  }

  /** The windows of the models its runs use, each described (and logged) at its first run. */
  get windows(): SessionWindows {
    const { options, catalogue } = this.shared;
    this.#windows ??= new SessionWindows({
      store: options.store,
      continuity: this.continuity,
      provider: options.provider,
      catalogue,
      ...(options.modelWindows ? { settings: options.modelWindows } : {}),
      ...(options.observer ? { observer: options.observer } : {}),
    });
    return this.#windows;
  }

  /** Memory from other continuities: recall, the `memory` feed, the one warning of a failing index. */
  get memory(): SessionMemory {
    const { options } = this.shared;
    this.#memory ??= new SessionMemory({
      store: options.store,
      continuity: this.continuity,
      recaller: options.memory,
      index: options.memoryIndex,
      observer: options.observer,
    });
    return this.#memory;
  }

  /** The foreground agent's context feeds. */
  get feeds(): SessionFeeds {
    const { options } = this.shared;
    this.#feeds ??= createSessionFeeds({
      store: options.store,
      continuity: this.continuity,
      ...(options.feeds ? { feeds: options.feeds } : {}),
      internalSources: this.memory.feedSources(() => this.state?.foreground),
      sources: feedSourcePath(this),
      ...(options.recordedFeeds ? { recorded: options.recordedFeeds } : {}),
      ...(options.recordedFeedRegistry ? { registry: options.recordedFeedRegistry } : {}),
    });
    return this.#feeds;
  }

  /**
   * A step's feeds with the stream watch's notes after them (live runs only: replay's recorded
   * feeds already hold the notes the original saw).
   */
  async #stepFeeds(step: string): Promise<StepFeeds | undefined> {
    const read = await this.feeds.read(step);
    const { watch, recordedFeeds } = this.shared.options;
    if (!watch || recordedFeeds) return read;
    const notes = watch.notes(this.continuity).trim();
    if (notes === "") return read;
    return { text: read ? `${read.text}\n\n${notes}` : notes, values: read?.values ?? {} };
  }

  /** The continuity's sources, when the runtime has any (`AgentRuntimeOptions.sources`). */
  get sources(): SessionSources | undefined {
    const given = this.shared.options.sources;
    if (given && !this.#sources) this.#sources = new SessionSources(this, given);
    return this.#sources;
  }

  /**
   * The continuity's state, folded from the log once (the worker and the driver learn their open
   * work from the same read), with the estimators calibrated from it.
   */
  async loadState(): Promise<ContinuityState> {
    if (!this.state) {
      const { options, catalogue } = this.shared;
      const { worker, driver, sources } = this;
      const loaded = await loadContinuityState(options.store, this.continuity, (event) => {
        worker.observe(event);
        driver.observe(event);
        sources?.observe(event);
      });
      this.state ??= loaded.state;
      this.estimator ??=
        options.estimator ?? createTokenEstimator({ catalogue, calibration: loaded.calibration });
      this.#background ??= createTokenEstimator({
        catalogue,
        calibration: loaded.backgroundCalibration,
      });
    }
    return this.state;
  }

  /** The history of `thread`, read from the thread's first message on (not the continuity's). */
  history(thread: string): ThreadHistory {
    let history = this.histories.get(thread);
    if (!history) {
      const known = this.state?.threads.get(thread);
      history = new ThreadHistory(thread, {
        after: known ? Math.max(0, known.readFrom - 1) : 0,
        ...screenshotsOf(this.shared.options),
        ...(this.state ? { pinned: this.state.pinned, sourceModes: this.state.sourceModes } : {}),
      });
      this.histories.set(thread, history);
    }
    return history;
  }

  /** A handoff continued `from` into `to`: the foreground moves onto the continuation. */
  continued(from: string, to: string, history: ThreadHistory): void {
    const { state } = this;
    // The continuation's live files start with it, whether or not a step runs there now.
    void this.files?.sinks(to);
    this.histories.set(to, history);
    this.histories.delete(from);
    if (!state) return;
    const old = state.threads.get(from);
    if (old) old.ended = "thread.continued";
    state.threads.set(to, {
      id: to,
      directive: old?.directive ?? this.shared.options.agent.directive,
      startSeq: history.lastSeq + 1,
      readFrom: history.lastSeq + 1,
      nextStep: 0,
    });
    state.foreground = to;
  }

  /** The threads' live files, when the runtime writes them (`AgentRuntimeOptions.threadFiles`). */
  get files(): ThreadFiles | undefined {
    const { options } = this.shared;
    if (options.threadFiles && !this.#files) {
      this.#files = new ThreadFiles({
        store: options.store,
        continuity: this.continuity,
        dir: options.threadFiles.dir,
      });
    }
    return this.#files;
  }

  /**
   * Runs a thread of this continuity to its end (the foreground, a child, a summarizer); then
   * closes the live files of the threads that have ended.
   */
  runThread(run: SessionRun): Promise<ThreadRunResult> {
    const files = this.files;
    if (!files) return this.#runThread(run);
    return (async () => {
      await files.sinks(run.thread);
      try {
        return await this.#runThread(run);
      } finally {
        await files.closeEnded((thread) => this.state?.threads.get(thread)?.ended !== undefined);
      }
    })();
  }

  async #runThread(run: SessionRun): Promise<ThreadRunResult> {
    const { options, catalogue, continuation } = this.shared;
    const { spec } = run;
    const window = await this.windows.describe(spec.model, run.thread, run.signal);
    const files = this.files;
    return runThreadLoop({
      ...(files ? { files: (thread: string) => files.sinks(thread) } : {}),
      store: options.store,
      continuity: this.continuity,
      thread: run.thread,
      directive: spec.directive,
      model: spec.model,
      provider: options.provider,
      system: buildSystemPrompt({
        directive: spec.directive,
        instructions: spec.instructions,
        tools:
          spec.toolsText ??
          spec.tools.map((tool) => `- ${tool.name}: ${tool.description}`).join("\n"),
        ...(spec.capabilitiesText ? { capabilities: spec.capabilitiesText } : {}),
        ...(run.depth === 0 && this.sources ? { sources: this.sources.describe() } : {}),
      }),
      history: this.history(run.thread),
      ...(spec.nativeTools !== false && spec.tools.length > 0
        ? { nativeTools: nativeTools(spec.tools) }
        : {}),
      executors: sessionExecutors(this, run.thread, spec, run.depth, run.signal),
      limits: spec.limits,
      catalogue,
      window,
      estimator:
        run.estimator ?? this.estimator ?? options.estimator ?? createTokenEstimator({ catalogue }),
      nextStep: run.nextStep,
      knownArtifacts: this.artifacts,
      tasks: this.tasks,
      ...(run.turn ? { turn: run.turn } : {}),
      ...(run.input !== undefined ? { input: run.input } : {}),
      ...(run.resumed ? { resumed: true } : {}),
      ...(run.ending ? { ending: run.ending } : {}),
      ...(options.signer ? { signer: options.signer } : {}),
      ...(options.observer && run.depth === 0 ? { observer: options.observer } : {}),
      signal: run.signal,
      ...(options.random ? { random: options.random } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(run.depth === 0
        ? {
            lifecycle: this.driver.lifecycle({
              directive: spec.directive,
              model: spec.model,
              ...(spec.manifest !== undefined ? { agent: spec.manifest } : {}),
              window: window.contextWindow,
              budget: inputBudget(window),
              handoff: true,
            }),
            summaryTokens: continuation.summaryMaxTokens,
            feeds: (step: string) => this.#stepFeeds(step),
          }
        : {}),
    });
  }

  /**
   * Runs the foreground agent as `thread`, `run` telling where it starts, with the session's
   * `running` set for `cancel`; the thread it ended in goes on from its next step, and a run that
   * stopped short suspends or cancels its thread.
   */
  async runForeground(
    run: Omit<SessionRun, "spec" | "depth" | "signal">,
  ): Promise<ThreadRunResult> {
    const controller = new AbortController();
    const running = { controller, thread: run.thread, ended: false };
    this.running = running;
    try {
      const result = await this.runThread({
        ...run,
        spec: this.shared.options.agent,
        depth: 0,
        signal: controller.signal,
        ending: () => {
          running.ended = true;
        },
      });
      // The thread the run ended in (a continuation, after a handoff) goes on from its next step.
      const ended = this.state?.threads.get(result.thread);
      if (ended) ended.nextStep = result.nextStep;
      await this.stopped(result, controller.signal);
      return result;
    } finally {
      this.running = undefined;
    }
  }

  /** Runs `turn` on the foreground thread now, starting a thread when there is none to go on. */
  async runTurnNow(turn: string): Promise<ThreadRunResult> {
    this.takenUp = true;
    const { options } = this.shared;
    const { store, agent } = options;
    const state = await this.loadState();
    // The turn's seq is known when it was in the log at load; else it is after what the
    // foreground's history has read.
    const known = state.turnSeqs.get(turn);
    const input = this.memory.wanted
      ? await turnInput(
          store,
          this.continuity,
          turn,
          known !== undefined
            ? known - 1
            : (this.histories.get(state.foreground ?? "")?.lastSeq ?? 0),
        )
      : undefined;
    this.actor = input?.actor;
    if (input) this.memory.conversation = input;
    let thread = state.foreground;
    if (thread === undefined || state.threads.get(thread)?.ended !== undefined) {
      const previous = thread !== undefined ? this.histories.get(thread) : undefined;
      thread = `th-${turn}`;
      this.histories.set(
        thread,
        previous
          ? previous.successor(thread)
          : new ThreadHistory(thread, {
              after: Math.max(0, (state.turnSeqs.get(turn) ?? 1) - 1),
              ...screenshotsOf(this.shared.options),
              pinned: state.pinned,
              sourceModes: state.sourceModes,
            }),
      );
      await store.append({
        continuity: this.continuity,
        stream: { kind: "thread", id: thread },
        type: "thread.started",
        data: {
          directive: agent.directive,
          chain_root: thread,
          model: agent.model,
          turn,
          ...(agent.manifest !== undefined ? { agent: agent.manifest } : {}),
          ...(agent.inputs !== undefined ? { inputs: { ...agent.inputs } } : {}),
          ...(agent.tools.some((tool) => tool.name === MEMORY_SEARCH) ? { memory: true } : {}),
        },
      });
      state.threads.set(thread, {
        id: thread,
        directive: agent.directive,
        startSeq: 0,
        readFrom: 0,
        nextStep: 0,
      });
      state.foreground = thread;
      await this.driver.fire("thread.started", { thread, directive: agent.directive }, thread);
      if (input) {
        await this.memory.recall({
          continuity: this.continuity,
          thread,
          trigger: "start",
          query: input.text,
          ...(input.actor !== undefined ? { actor: input.actor } : {}),
        });
      }
    }
    const info = state.threads.get(thread)!;
    await recordThreadResumed(store, this.continuity, info, turn);
    await this.sources?.beforeRun(turn, thread);
    return this.runForeground({ thread, nextStep: info.nextStep, turn });
  }

  /** A foreground run that stopped short suspends or cancels its thread (hooks may answer). */
  stopped(result: Pick<ThreadRunResult, "thread" | "status">, signal?: AbortSignal): Promise<void> {
    const thread = this.state?.threads.get(result.thread);
    return recordRunStop({
      store: this.shared.options.store,
      continuity: this.continuity,
      driver: this.driver,
      directive: this.shared.options.agent.directive,
      result,
      ...(signal ? { signal } : {}),
      ...(thread ? { thread } : {}),
    });
  }

  /** Puts the run of `turn` on the chain (once: a turn known already gives its run). */
  enqueue(turn: string): Promise<ThreadRunResult> {
    const { runs } = this.shared;
    const known = runs.get(turn);
    if (known !== undefined) return known;
    this.waiting += 1;
    const result = this.onChain(() => {
      this.waiting -= 1;
      return this.runTurnNow(turn);
    });
    runs.set(turn, result);
    return result;
  }

  /**
   * Runs a turn already appended: now when nothing runs, else queued behind the running run
   * (`turn.queued`) or interrupting it (`concurrency: "interrupt"`).
   */
  async accept(turn: string): Promise<ThreadRunResult> {
    const { options, runs } = this.shared;
    const known = runs.get(turn);
    if (known !== undefined) return known;
    if (this.running) {
      if (options.concurrency === "interrupt") {
        this.running.controller.abort(`interrupted by a new turn (${turn})`);
      } else {
        // Queued before the event is logged: a turn accepted while this one's event is being
        // written counts it, as it would a moment later (replay accepts turns back to back).
        const position = this.waiting + 1;
        const { thread } = this.running;
        const queued = this.enqueue(turn);
        await options.store.append({
          continuity: this.continuity,
          type: "turn.queued",
          data: { turn, behind: thread, position },
        });
        notify(options.observer, { type: "queued", turn, position });
        return queued;
      }
    }
    return this.enqueue(turn);
  }

  /** Puts `work` on the chain of runs and resolves with its result. */
  onChain<T>(work: () => Promise<T>): Promise<T> {
    const result = this.chain.then(work);
    this.chain = result.catch(() => undefined);
    return result;
  }

  /** Cancels the running foreground run's step (its actions are cancelled, logged). */
  cancel(reason: string): void {
    this.running?.controller.abort(reason);
  }

  /** Resolves once no run is going or queued, no task and no background work running. */
  async settled(): Promise<void> {
    while (true) {
      const chain = this.chain;
      await chain;
      await this.#worker?.idle();
      await this.#driver?.idle();
      await this.tasks.settled();
      if (this.chain === chain) return;
    }
  }

  /**
   * Stops the session: logs `runtime.closed` (when this runtime took the continuity up), cancels
   * its run and its tasks, stops its sources' runners, lets background work (summaries, hooks' actions: each bounded by its
   * timeout) finish, and stops its feeds.
   *
   * The close is a decision, so it is an event, and replay closes its runtime where the log has
   * it. It is appended before anything is cancelled, and the cancels follow in the same tick: the
   * store writes appends in call order, so every `action.cancelled` it causes comes after it, and
   * no task can end between the decision and its cancel (the tasks it names are exactly those it
   * cancels). Should the store refuse the event (the lease was taken over, the store closed), the
   * close goes on all the same: the new owner's recovery reports what this one left open. Any
   * other failure to log it is thrown once the close is done. A session closes once: a second
   * call gives the first one's promise.
   */
  close(reason: string): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: string): Promise<void> {
    // First: no delivery turn is appended once the close is decided.
    const sources = this.#sources?.close();
    const logged = this.#logClosed(reason);
    this.cancel(reason);
    const cancelled = this.tasks.cancel(reason);
    const failed = await logged;
    await cancelled;
    await sources;
    await this.settled();
    await this.#feeds?.stop();
    await this.#files?.close();
    if (failed !== undefined && !(failed instanceof StoreError)) throw failed;
  }

  /**
   * Appends `runtime.closed` for a continuity this runtime took up; resolves with the append's
   * error, if it failed.
   */
  #logClosed(reason: string): Promise<unknown> {
    if (!this.takenUp && this.running === undefined && this.waiting === 0) {
      return Promise.resolve(undefined);
    }
    // A run whose run.completed is issued already has ended as the log tells it (replay, which
    // closes where the log has the close, finds it ended too): the close names no run.
    const open = this.running?.ended === false ? this.running : undefined;
    return this.shared.options.store
      .append({
        continuity: this.continuity,
        type: "runtime.closed",
        data: {
          reason,
          ...(open ? { run: open.thread } : {}),
          tasks: this.tasks.runningStreams(),
        },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
  }
}
