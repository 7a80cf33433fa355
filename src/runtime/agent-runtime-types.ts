import type {
  ActionCall,
  ActionExecutor,
  AnyInternalAction,
  AnyTool,
  CheckedActionExecutor,
  InternalActionsPolicy,
} from "../actions/index.js";
import type { SummarizerChoice } from "../continuity/index.js";
import type { ContinuationConfig } from "../directives/index.js";
import type { FeedRegistryState } from "../feeds/index.js";
import type { HookEntry } from "../hooks/index.js";
import type { EventStore } from "../log/index.js";
import type { MemoryIndex, MemoryRecaller } from "../memory/index.js";
import type { ModelCatalogue, Provider, TokenEstimator } from "../providers/index.js";
import type { CheckpointSigner } from "../transcript/index.js";
import type { ThreadRunResult } from "./agent-loop-types.js";
import type { LeaseOptions } from "./continuity-lease.js";
import type { ContinuityState } from "./continuity-state.js";
import type { PermissionCheck } from "./gated-executor.js";
import type { StepExecutorScope } from "./inner-action.js";
import type { RunLimits } from "./loop-decision.js";
import type { RunObserver } from "./run-notice.js";
import type { RecordedStepFeeds, RuntimeFeeds } from "./session-feeds.js";
import type { ContinuityActivity, RuntimeWatch } from "./session-watch.js";
import type { ModelWindowSettings } from "./session-windows.js";
import type { RuntimeSources, SourcesView } from "./source-config.js";

/** A directive made runnable: what a thread of it needs. */
export interface AgentSpec {
  directive: string;
  instructions: string;
  model: string;
  limits: RunLimits;
  permits: PermissionCheck;
  tools: readonly AnyTool[];
  /** The tools described for the system prompt (default: name and description of each). */
  toolsText?: string;
  /**
   * The `agent`, `relic` and `workflow` actions it may use, described for the system prompt's
   * "Other actions" section (`SystemPromptParts.capabilities`); none when absent or empty.
   */
  capabilitiesText?: string;
  /** The agent manifest this spec was assembled from, recorded on `thread.started`. */
  manifest?: string;
  /**
   * The typed inputs `instructions` were filled with, recorded on the foreground's
   * `thread.started` so that resume and replay assemble the same instructions.
   */
  inputs?: Readonly<Record<string, unknown>>;
  /**
   * Offer the tools natively too (Anthropic `tools`, OpenAI functions), so a model may call them
   * with its provider's tool calls as well as with `<action>` tags (default true).
   */
  nativeTools?: boolean;
}

/** Options of `createAgentRuntime`. */
export interface AgentRuntimeOptions {
  store: EventStore;
  provider: Provider;
  /** The foreground agent: what turns of a continuity run. */
  agent: AgentSpec;
  /** Directives `agent` actions may run as child threads, by name. */
  agents?: { get(name: string): AgentSpec | undefined; names(): readonly string[] };
  /** The fast-tier model of `llm` actions (default: the agent's model). */
  fastModel?: string;
  /**
   * Browser screenshots a thread's context holds as images, newest first (the manifest's
   * `browser.screenshots_in_context`; default 1): each older one is a line of history.
   */
  screenshotsInContext?: number;
  /** More executors (relic, workflow), gated by the running directive's permissions. */
  executors?: readonly (ActionExecutor | CheckedActionExecutor)[];
  /**
   * Executors made per step (a workflow's graph stream is named after its step), gated alike.
   * `scope.runAction` runs an inner action of theirs through the step's own executors (intent
   * logged, permission checked, side effects serialized, replay intercepted); an executor whose
   * effects all go that way says `composite: true`, and replay runs it instead of serving it.
   */
  stepExecutors?: (scope: StepExecutorScope) => readonly (ActionExecutor | CheckedActionExecutor)[];
  /** Internal actions beyond the variable ones. */
  internalActions?: readonly AnyInternalAction[];
  /** Which internal actions the agent may use (an agent manifest's `internal_actions`). */
  internalActionsPolicy?: InternalActionsPolicy;
  catalogue?: ModelCatalogue;
  /**
   * What the environment and config.yaml say of models' windows (`SPOOL_CONTEXT_WINDOW`,
   * `model_info:`); below them come the server's answer, the catalogue and an assumed window.
   */
  modelWindows?: ModelWindowSettings;
  estimator?: TokenEstimator;
  signer?: CheckpointSigner;
  /**
   * Write every thread's `transcript.jsonl` and `knowledge.md` under `<dir>/<thread>/` while it
   * runs (foreground, continuation, child and summarizer threads alike; see `ThreadFiles`). The
   * CLI's chat, run and resume set it; replay, on a scratch store, does not.
   */
  threadFiles?: { dir: string };
  observer?: RunObserver;
  /** A turn that arrives mid-run waits (`queue`, the default) or cancels the run (`interrupt`). */
  concurrency?: "queue" | "interrupt";
  /** Jitter for action and step retry backoff, [0, 1) (seed it for replay). */
  random?: () => number;
  now?: () => number;
  /**
   * Replay's hook: called for every attempt of a `tool`, `llm`, `relic` or `workflow` action
   * (a workflow's inner actions included) before its executor, composite executors excepted; a
   * promise it returns stands for the executor's result (the recorded one), `undefined` lets the
   * executor run.
   */
  intercept?: (call: InterceptedCall) => Promise<unknown> | undefined;
  /** The hooks in force (`loadHooks(space).hooks`); default the built-in ones. */
  hooks?: readonly HookEntry[];
  /** `coordination.yaml`'s continuation settings; default its built-in values. */
  continuation?: ContinuationConfig;
  /** The summarizer of a directive; default `selectSummarizer` over `agents`. */
  summarizerFor?: (directive: string) => SummarizerChoice;
  /** A summarizer directive made runnable (on `summary_model`'s tier); default `agents.get`. */
  summarizerSpec?: (name: string) => AgentSpec | undefined;
  /** Milliseconds a summarizer may take (default 120 000). */
  summaryTimeoutMs?: number;
  /**
   * Memory from other continuities of the store: asked at a foreground thread's start (with its
   * first user turn) and at each handoff (with the summary), its choice logged as
   * `memory.recalled` before the thread's context carries it. Replay's world replaces it with the
   * choices the log recorded. None: threads start without memory.
   */
  memory?: MemoryRecaller;
  /**
   * The store's memory index, searched by the `memory` context feed an agent may declare
   * (`source: { type: internal, action: memory }`) for the newest user turn. None: that feed
   * fails with `memory.unavailable` (and the session warns once).
   */
  memoryIndex?: MemoryIndex;
  /** The foreground agent's context feeds (an agent manifest's `context_feeds`). */
  feeds?: RuntimeFeeds;
  /**
   * A stream watch beside the runtime (an agent manifest's `watch:` section): its notes go into
   * each live step's context feeds, and a screen question's turn gets the current frame
   * attached (`RuntimeWatch`). Replay records both in the log and needs none.
   */
  watch?: RuntimeWatch;
  /**
   * The foreground agent's sources (an agent manifest's `sources` and `source_actions`): taken
   * up with the continuity, their chunks delivered as turns when it is idle (`SessionSources`),
   * managed by the model's `source.*` actions. A replay runtime (`world`) starts no source and
   * appends no delivery: it runs the delivery turns its log copies in.
   */
  sources?: RuntimeSources;
  /**
   * Replay's feeds: each step's rendered feeds and `$id` values as the log recorded them
   * (`context.feeds`); with it no feed engine runs and no source is read.
   */
  recordedFeeds?: (step: string) => RecordedStepFeeds | undefined;
  /**
   * Replay's feed registry: the feeds the log had when the action `actionId` of `step` ran (the
   * model's `add_context_feed`, `update_context_feed`, `remove_context_feed` meet it again).
   */
  recordedFeedRegistry?: (step: string, actionId: string) => FeedRegistryState;
  /** Waits a retry's backoff (replay passes one that does not wait). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Replay's closed world: with it, the runtime's provider, executors, tools, feed sources,
   * clock and action results are the world's (`ReplayWorld.enclose`), so it reaches nothing
   * outside the log; whatever it would reach throws `replay.outside-call`.
   */
  world?: RuntimeWorld;
  /**
   * One owner per continuity: with it, the runtime takes a continuity's lease before it runs
   * anything there (`submit`, `accept`, `runTurn`, `resume` reject with `ContinuityLiveError`
   * while another process holds it), renews it while it runs, runs the turns other processes
   * append to it, and releases it at `close`. Every process that runs continuities of a shared
   * store sets it (the CLI does); without it, nothing stops a second process running the same
   * continuity.
   */
  lease?: LeaseOptions;
}

/** An action attempt as `intercept` sees it. */
export interface InterceptedCall extends ActionCall {
  step: string;
}

/** An input to a continuity. */
export interface TurnInput {
  text: string;
  actor: string;
  origin: string;
}

/**
 * The agent runtime: turns on continuities start or continue their foreground thread; each
 * continuity runs one turn at a time (a turn that arrives mid-run is queued, or interrupts the
 * run, by policy) and its side-effecting actions one at a time.
 */
export interface AgentRuntime {
  /**
   * Appends the turn, then runs it (after the runs before it); resolves when its run ends.
   * Rejects with `ActorAccessError`, appending nothing, when the continuity's access list refuses
   * `input.actor` (added read-only, removed, or not on a list the continuity keeps).
   */
  submit(continuity: string, input: TurnInput): Promise<ThreadRunResult>;
  /**
   * Runs a turn already in the log (appended by someone else), as `submit` does after its
   * append: queued behind a running turn (`turn.queued`), or interrupting it, by policy.
   */
  accept(continuity: string, turn: string): Promise<ThreadRunResult>;
  /** Runs a turn already in the log after the runs before it, without the queue's event. */
  runTurn(continuity: string, turn: string): Promise<ThreadRunResult>;
  /**
   * Recovers the continuity after a crash: an interrupted run of its foreground thread goes on
   * from the log (`recoverRun`: no model call is repeated for a completed step), interrupted
   * child threads are closed, and turns no run took are run in order. Resolves with those runs.
   */
  resume(continuity: string): Promise<ThreadRunResult[]>;
  /** Cancels the continuity's running step (its actions are cancelled; the run ends cancelled). */
  cancel(continuity: string, reason?: string): void;
  /**
   * Resolves once the continuity has no run going and none queued (background summaries may
   * still be running; `close` waits for them).
   */
  idle(continuity: string): Promise<void>;
  /**
   * Resolves once the continuity has no run going or queued and no task (`fire_and_forget`
   * action) running: every task's result is in the log, also those that ended after their run's
   * `run.completed`.
   */
  settled(continuity: string): Promise<void>;
  /** The continuity's state as the runtime sees it (loaded from the log at first touch). */
  state(continuity: string): Promise<ContinuityState>;
  /**
   * Whether a foreground run is going or queued on `continuity`, and when this runtime last took
   * a turn for it: what a stream watch's commentary gates read. Never touches the log.
   */
  activity(continuity: string): ContinuityActivity;
  /**
   * The continuity's sources as this runtime runs them: their states, and a wait until they are
   * all done and delivered (`SourcesView`). Without `sources` in the options there are none:
   * `states()` is empty and `untilExhausted` waits for the continuity to be idle.
   */
  sources(continuity: string): SourcesView;
  /**
   * Cancels every run and every task (`action.cancelled` on its task stream, never dropped) and
   * waits for them, and for background work (summaries, hooks), to end. Call `settled` first to
   * let tasks finish instead.
   */
  close(): Promise<void>;
}

/**
 * A world a runtime runs enclosed in: it rewrites the runtime's options so every way out (the
 * provider, tools, relics, feeds, the clock) goes through it. Replay's closed world
 * (`createReplayWorld` in `src/replay/`) is one.
 */
export interface RuntimeWorld {
  enclose(options: AgentRuntimeOptions): AgentRuntimeOptions;
}
