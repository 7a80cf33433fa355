import type { TaskSet } from "../actions/index.js";
import type { ContextBundle } from "../continuity/index.js";
import type { EventStore } from "../log/index.js";
import type {
  ModelCatalogue,
  ModelWindow,
  Provider,
  TokenEstimator,
  Usage,
} from "../providers/index.js";
import type { EventData } from "../spec/index.js";
import type { CheckpointSigner, ThreadFileSinks } from "../transcript/index.js";
import type { ExecutorFactory } from "./agent-step.js";
import type { Decision, RunLimits } from "./loop-decision.js";
import type { NativeTools } from "./native-tools.js";
import type { RunLimitName, RunObserver, RunTotals } from "./run-notice.js";
import type { StepFeeds } from "./session-feeds.js";
import type { ThreadHistory } from "./thread-history.js";

/** Everything a run of one thread needs. */
export interface ThreadRunOptions {
  store: EventStore;
  continuity: string;
  thread: string;
  directive: string;
  model: string;
  provider: Provider;
  system: string;
  history: ThreadHistory;
  executors: ExecutorFactory;
  limits: RunLimits;
  catalogue: ModelCatalogue;
  /** The model's window and output limit (`SessionWindows.describe`): the one source of both. */
  window: ModelWindow;
  estimator: TokenEstimator;
  /** The index of the thread's next step. */
  nextStep: number;
  turn?: string;
  /** A child thread's task: its first message. */
  input?: string;
  resumed?: boolean;
  signer?: CheckpointSigner;
  observer?: RunObserver;
  signal?: AbortSignal;
  /**
   * Called synchronously as the run's final `run.completed` is issued, before its append: from
   * then on the run has ended as the log will tell it (a close no longer names it as cut off).
   */
  ending?: () => void;
  /** Milliseconds for the wall-time limit (default `performance.now`). */
  now?: () => number;
  random?: () => number;
  /** Tools offered natively to the provider, and the way back from their native names. */
  nativeTools?: NativeTools;
  /** Output tokens reserved from the window (default: `window`'s output limit, at most 8192). */
  reserveOutputTokens?: number;
  /** Artifacts already stored (shared across runs, so an unchanged system prompt is stored once). */
  knownArtifacts?: Set<string>;
  /**
   * The context feeds of a step (the current state of the agent's sources), rendered and as the
   * values `$id` gives in its actions and responses, or `undefined` for none. Logged as
   * `context.feeds` (text and values) before the step's compile.
   */
  feeds?: (step: string) => Promise<StepFeeds | undefined>;
  /** Tokens the summary chain may take beyond its newest summary. */
  summaryTokens?: number;
  /** Pressure, hooks and handoff: what the continuity module does around each step. */
  lifecycle?: LoopContinuity;
  /** The continuity's tasks: its steps' `fire_and_forget` actions outlive the run there. */
  tasks?: TaskSet;
  /**
   * The live `transcript.jsonl` and `knowledge.md` of a thread (the run's, or the continuation it
   * hands off to), asked before each of its steps; none when absent.
   */
  files?: (thread: string) => Promise<ThreadFileSinks>;
}

/** What the continuity module sees of a thread between steps. */
export interface PreStepReview {
  thread: string;
  history: ThreadHistory;
  /** The context compiled for the thread's next step (or the step just taken). */
  bundle: ContextBundle;
  /** The thread's next step index. */
  nextStep: number;
  /** The run goes on after this point. */
  continues: boolean;
  /** `run.started` data of the continuation, should the review hand the thread off. */
  runStarted: EventData<"run.started">;
  /** `run.completed` data that ends this thread's part of the run, when it goes on elsewhere. */
  runCompleted: EventData<"run.completed">;
  /** The last provider response id of the step (a cursor the handoff rotates away from). */
  responseId: string | null;
}

/** What a step left for the continuity module to look at. */
export interface StepReview extends PreStepReview {
  /** The step's index and id. */
  index: number;
  step: string;
  usage: Usage;
  decision: Decision["decision"] | "limit";
  /** The provider refused the step as longer than the context window: the thread must hand off. */
  contextTooLong: boolean;
  /**
   * Settles once the step's end is written, when the loop did not wait for it: whatever reads the
   * log or logs from the thread's history (hooks, a summary, a handoff) waits for it first.
   */
  ended?: Promise<unknown>;
}

/**
 * The continuity module's part in the loop: error and limit hooks, and after every step the
 * pressure, the hooks, and a handoff to a continuation thread. Supplied by the runtime.
 */
export interface LoopContinuity {
  /** An `error` hook event; `retry` says to run the step again after `delayMs`. */
  onError(info: {
    thread: string;
    step: string;
    attempt: number;
    error: { code: string; message: string; transient: boolean };
  }): Promise<{ retry: true; delayMs: number; reason: string } | { retry: false }>;
  /** A `limit` hook event. */
  onLimit(info: { thread: string; limit: RunLimitName; value: number; max: number }): Promise<void>;
  /**
   * Before a step whose compiled context had to leave messages out: the thread the run goes on
   * in (a continuation), or `undefined` to take the step as compiled.
   */
  beforeStep(
    review: PreStepReview,
  ): Promise<{ thread: string; history: ThreadHistory; reason: string } | undefined>;
  /** After a step: the thread the run goes on in (a continuation), or `undefined` for this one. */
  afterStep(
    review: StepReview,
  ): Promise<{ thread: string; history: ThreadHistory; reason: string } | undefined>;
  /** Waits `ms` (a retry's backoff), or less when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** How a run ended. */
export interface ThreadRunResult {
  thread: string;
  status: EventData<"run.completed">["status"];
  steps: number;
  nextStep: number;
  result?: string;
  error?: { code: string; message: string };
  totals: RunTotals;
}
