import type { SummarizerChoice } from "../continuity/index.js";
import type { ContinuationConfig } from "../directives/index.js";
import type { ModelCatalogue, TokenEstimator } from "../providers/index.js";
import type { ThreadRunResult } from "./agent-loop-types.js";
import type { AgentRuntimeOptions, AgentSpec } from "./agent-runtime-types.js";

/** What every session of a runtime shares: its resolved options and its registry of turns. */
export interface RuntimeShared {
  /** The runtime's options (enclosed in the replay world, when replaying). */
  options: AgentRuntimeOptions;
  catalogue: ModelCatalogue;
  /** `coordination.yaml`'s continuation settings, resolved. */
  continuation: ContinuationConfig;
  /** The summarizer of a directive. */
  summarizerFor: (directive: string) => SummarizerChoice;
  /** Every turn's run, by turn id: a turn found twice (in the log and by the follower) runs once. */
  runs: Map<string, Promise<ThreadRunResult>>;
  /**
   * A fresh id for a turn the runtime appends itself (a source delivery), marked as its own so
   * the lease's follower does not hand it back; absent without a lease.
   */
  ownTurn?: () => string;
}

/** One run of a thread of a session. */
export interface SessionRun {
  thread: string;
  spec: AgentSpec;
  /** Spawn depth: 0 for the foreground thread, which alone gets the observer and the lifecycle. */
  depth: number;
  nextStep: number;
  turn?: string;
  input?: string;
  resumed?: boolean;
  signal: AbortSignal;
  /** Called as the run's final `run.completed` is issued (see `ThreadRunOptions.ending`). */
  ending?: () => void;
  /** The estimator of this thread, when not the foreground's. */
  estimator?: TokenEstimator;
}
