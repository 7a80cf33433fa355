import type { EventStore, Projection } from "../log/index.js";
import { type CalibrationState, calibrationProjection } from "../providers/tokens/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";

/** A thread as the runtime needs to know it. */
export interface ThreadState {
  id: string;
  directive: string;
  model?: string;
  /** The agent manifest it runs with, when one. */
  agent?: string;
  /** Set for child threads (`agent` actions). */
  parent?: EventData<"thread.started">["parent"];
  startSeq: number;
  /** The index its next step takes. */
  nextStep: number;
  /** A run that started and has not completed: a crash interrupted it (or it is running now). */
  openRun?: { seq: number; turn?: string; input?: string };
  /** Set once the thread completed, failed, was cancelled or continued. */
  ended?: string;
}

/** What the runtime folds from a continuity's log when it first touches it. */
export interface ContinuityState {
  /** The newest thread without a parent: where the next turn goes. */
  foreground?: string;
  threads: Map<string, ThreadState>;
  /** Turns no run has taken yet, oldest first. */
  waitingTurns: string[];
}

const ENDINGS = new Set([
  "thread.completed",
  "thread.failed",
  "thread.cancelled",
  "thread.continued",
]);

/** The fold behind `loadContinuityState`. */
export const continuityStateProjection: Projection<ContinuityState> = {
  initial: (): ContinuityState => ({ threads: new Map(), waitingTurns: [] }),
  reduce(state, event) {
    reduceEvent(state, event);
    return state;
  },
};

/** Applies one event to a continuity state in place. */
export function applyContinuityEvent(state: ContinuityState, event: SpoolEvent): void {
  reduceEvent(state, event);
}

function reduceEvent(state: ContinuityState, event: SpoolEvent): void {
  const { stream } = event;
  if (event.type === "turn.added") {
    state.waitingTurns.push(event.id);
    return;
  }
  if (stream.kind === "thread") {
    if (event.type === "thread.started") {
      const data = event.data as EventData<"thread.started">;
      state.threads.set(stream.id, {
        id: stream.id,
        directive: data.directive,
        ...(data.model !== undefined ? { model: data.model } : {}),
        ...(data.agent !== undefined ? { agent: data.agent } : {}),
        ...(data.parent ? { parent: data.parent } : {}),
        startSeq: event.seq,
        nextStep: 0,
      });
      if (!data.parent) state.foreground = stream.id;
      return;
    }
    const thread = state.threads.get(stream.id);
    if (!thread) return;
    if (event.type === "run.started") {
      const data = event.data as EventData<"run.started">;
      thread.openRun = {
        seq: event.seq,
        ...(data.turn !== undefined ? { turn: data.turn } : {}),
        ...(data.input !== undefined ? { input: data.input } : {}),
      };
      if (data.turn !== undefined) {
        const at = state.waitingTurns.indexOf(data.turn);
        if (at !== -1) state.waitingTurns.splice(at, 1);
      }
    } else if (event.type === "run.completed") {
      delete thread.openRun;
    } else if (ENDINGS.has(event.type)) {
      thread.ended = event.type;
    }
    return;
  }
  if (stream.kind === "step" && event.type === "context.compiled") {
    const cut = stream.id.lastIndexOf(":");
    const thread = state.threads.get(stream.id.slice(0, cut));
    const index = Number(stream.id.slice(cut + 1));
    if (thread && Number.isInteger(index)) thread.nextStep = Math.max(thread.nextStep, index + 1);
  }
}

/** The runtime's view of a continuity from events already read. */
export function foldContinuityState(events: Iterable<SpoolEvent>): ContinuityState {
  const state: ContinuityState = { threads: new Map(), waitingTurns: [] };
  for (const event of events) reduceEvent(state, event);
  return state;
}

/**
 * Folds a continuity's log into the runtime's view of it and the token estimator's calibration,
 * in one read at first touch. Calibration comes from this continuity's log alone, so estimates
 * (and the windows they choose) are the same after a restart and in replay.
 */
export async function loadContinuityState(
  store: EventStore,
  continuity: string,
): Promise<{ state: ContinuityState; calibration: CalibrationState }> {
  const calibration = calibrationProjection();
  const state: ContinuityState = { threads: new Map(), waitingTurns: [] };
  let fold = calibration.initial();
  for await (const event of store.read({ continuity })) {
    reduceEvent(state, event);
    fold = calibration.reduce(fold, event);
  }
  return { state, calibration: fold.state };
}
