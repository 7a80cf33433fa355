import { SerialQueue, TaskSet } from "../actions/index.js";
import type { SummaryWorker } from "../continuity/index.js";
import type { TokenEstimator } from "../providers/index.js";
import type { ThreadRunResult } from "./agent-loop.js";
import type { AgentSpec } from "./agent-runtime.js";
import type { ContinuityDriver } from "./continuity-driver.js";
import type { ContinuityState } from "./continuity-state.js";
import type { LaneFeeds } from "./lane-feeds.js";
import type { ThreadHistory } from "./thread-history.js";

/**
 * What the runtime holds for one continuity: its chain of runs (one at a time), its state and
 * thread histories (loaded from the log at first touch), and its background machinery (summary
 * worker, hooks' driver), each made on first use.
 */
export interface Lane {
  chain: Promise<unknown>;
  /** Calibrated from this continuity's log alone, so a restart (and replay) estimates alike. */
  estimator?: TokenEstimator;
  state?: ContinuityState;
  histories: Map<string, ThreadHistory>;
  running?: { controller: AbortController; thread: string };
  waiting: number;
  serial: SerialQueue;
  /** Its `fire_and_forget` actions, which outlive their step and run (see `TaskSet`). */
  tasks: TaskSet;
  worker?: SummaryWorker;
  driver?: ContinuityDriver;
  /** The estimator of background threads (summarizers, hooks' directives). */
  background?: TokenEstimator;
  /** Artifacts this lane has stored (a step whose system prompt did not change stores none). */
  artifacts: Set<string>;
  /** The foreground agent's context feeds, made on first use. */
  feeds?: LaneFeeds;
  /**
   * This runtime has taken the continuity up (resumed it or run a turn on it). A `resume` that
   * takes up a continuity another runtime ran logs that restart (`recovery.started`).
   */
  takenUp: boolean;
}

/** A new lane: nothing loaded, nothing running or queued. */
export function createLane(): Lane {
  return {
    chain: Promise.resolve(),
    histories: new Map(),
    artifacts: new Set(),
    waiting: 0,
    serial: new SerialQueue(),
    tasks: new TaskSet(),
    takenUp: false,
  };
}

/** One run of a thread of a lane, as `RunLaneThread` takes it. */
export interface LaneRun {
  thread: string;
  spec: AgentSpec;
  /** Spawn depth: 0 for the foreground thread, which alone gets the observer and the lifecycle. */
  depth: number;
  nextStep: number;
  turn?: string;
  input?: string;
  resumed?: boolean;
  signal: AbortSignal;
  /** The estimator of this thread, when not the foreground's. */
  estimator?: TokenEstimator;
}

/** Runs a thread of a lane's continuity to its end (the runtime's `runThreadLoop` wiring). */
export type RunLaneThread = (
  continuity: string,
  lane: Lane,
  run: LaneRun,
) => Promise<ThreadRunResult>;

/** Resolves once a lane has no run going or queued, no task and no background work running. */
export async function settled(current: Lane): Promise<void> {
  while (true) {
    const chain = current.chain;
    await chain;
    await current.worker?.idle();
    await current.driver?.idle();
    await current.tasks.settled();
    if (current.chain === chain) return;
  }
}
