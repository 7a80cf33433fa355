import type { PinnedItem, SourceMode } from "../continuity/index.js";
import type { EventStore, Projection } from "../log/index.js";
import { type CalibrationState, calibrationProjection } from "../providers/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";
import { parseStepStreamId } from "../transcript/index.js";

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
  /**
   * The first seq its history needs: its start, or an earlier turn one of its runs took (a turn
   * can wait in the log before its thread starts). Reading from here never misses a message.
   */
  readFrom: number;
  /** The index its next step takes. */
  nextStep: number;
  /** A run that started and has not completed: a crash interrupted it (or it is running now). */
  openRun?: { seq: number; turn?: string; input?: string };
  /** Set once the thread completed, failed or continued. */
  ended?: string;
  /**
   * Its last run stopped short: a limit suspended the thread, or a cancellation stopped it. The
   * thread has not ended: the next turn goes on in it (`thread.resumed` clears this).
   */
  stopped?: "thread.suspended" | "thread.cancelled";
  /** A handoff began (`handoff.started`) and neither finished nor was deferred: a crash cut it. */
  pendingHandoff?: string;
}

/** What the runtime folds from a continuity's log when it first touches it. */
export interface ContinuityState {
  /** The newest thread without a parent: where the next turn goes. */
  foreground?: string;
  threads: Map<string, ThreadState>;
  /** Turns no run has taken yet, oldest first. */
  waitingTurns: string[];
  /** The seq of each waiting turn. */
  turnSeqs: Map<string, number>;
  /** The continuity's pinned rules and facts, by id, in the order pinned. */
  pinned: Map<string, PinnedItem>;
  /** The mode of each source declared (`source.added`), by source id: its summaries' format. */
  sourceModes: Map<string, SourceMode>;
  /** Tasks dispatched and not ended, by task stream id: a crash cut them off (or they run now). */
  openTasks: Map<string, OpenTask>;
}

/** A task (`fire_and_forget` action) with a durable intent and no result yet. */
export interface OpenTask {
  actionId: string;
  name: string;
}

/** Events that end an action; a timeout ends it only when no retry follows. */
const ACTION_ENDINGS = new Set([
  "action.succeeded",
  "action.failed",
  "action.skipped",
  "action.cancelled",
  "action.interrupted",
]);

const ENDINGS = new Set(["thread.completed", "thread.failed", "thread.continued"]);

/** A continuity with no events. */
export function emptyContinuityState(): ContinuityState {
  return {
    threads: new Map(),
    waitingTurns: [],
    turnSeqs: new Map(),
    pinned: new Map(),
    sourceModes: new Map(),
    openTasks: new Map(),
  };
}

/** The fold behind `loadContinuityState`. */
export const continuityStateProjection: Projection<ContinuityState> = {
  initial: emptyContinuityState,
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
    state.turnSeqs.set(event.id, event.seq);
    return;
  }
  if (event.type === "context.pinned") {
    const data = event.data as EventData<"context.pinned">;
    state.pinned.delete(data.id);
    state.pinned.set(data.id, { id: data.id, kind: data.kind, text: data.text });
    return;
  }
  if (event.type === "context.unpinned") {
    state.pinned.delete((event.data as EventData<"context.unpinned">).id);
    return;
  }
  if (event.type === "source.added") {
    const data = event.data as EventData<"source.added">;
    const mode = data.definition.mode;
    if (mode === "cursor" || mode === "state") state.sourceModes.set(data.source_id, mode);
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
        readFrom: Math.min(event.seq, (data.turn && state.turnSeqs.get(data.turn)) || event.seq),
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
        const seq = state.turnSeqs.get(data.turn);
        if (seq !== undefined) thread.readFrom = Math.min(thread.readFrom, seq);
        state.turnSeqs.delete(data.turn);
      }
    } else if (event.type === "run.completed") {
      delete thread.openRun;
    } else if (event.type === "handoff.started") {
      thread.pendingHandoff = (event.data as EventData<"handoff.started">).continuation;
    } else if (event.type === "handoff.deferred") {
      delete thread.pendingHandoff;
    } else if (event.type === "thread.suspended" || event.type === "thread.cancelled") {
      thread.stopped = event.type;
    } else if (event.type === "thread.resumed") {
      delete thread.stopped;
    } else if (ENDINGS.has(event.type)) {
      thread.ended = event.type;
      delete thread.pendingHandoff;
    }
    return;
  }
  if (stream.kind === "task") {
    reduceTaskEvent(state, event);
    return;
  }
  if (stream.kind === "step" && event.type === "context.compiled") {
    const step = parseStepStreamId(stream.id);
    const thread = state.threads.get(step.thread);
    const index = step.index;
    if (thread && Number.isInteger(index)) thread.nextStep = Math.max(thread.nextStep, index + 1);
  }
}

function reduceTaskEvent(state: ContinuityState, event: SpoolEvent): void {
  const id = event.stream.id;
  if (event.type === "action.dispatched") {
    const data = event.data as EventData<"action.dispatched">;
    state.openTasks.set(id, { actionId: data.action_id, name: data.name });
  } else if (
    ACTION_ENDINGS.has(event.type) ||
    (event.type === "action.timed-out" &&
      (event.data as EventData<"action.timed-out">).will_retry === false)
  ) {
    state.openTasks.delete(id);
  }
}

/** The runtime's view of a continuity from events already read. */
export function foldContinuityState(events: Iterable<SpoolEvent>): ContinuityState {
  const state = emptyContinuityState();
  for (const event of events) reduceEvent(state, event);
  return state;
}

/**
 * Folds a continuity's log into the runtime's view of it and the token estimators' calibration
 * (the foreground's, and background work's),
 * in one read at first touch. Calibration comes from this continuity's log alone, so estimates
 * (and the windows they choose) are the same after a restart and in replay.
 */
export async function loadContinuityState(
  store: EventStore,
  continuity: string,
  observe?: (event: SpoolEvent) => void,
): Promise<{
  state: ContinuityState;
  calibration: CalibrationState;
  backgroundCalibration: CalibrationState;
}> {
  const calibration = calibrationProjection();
  const state = emptyContinuityState();
  let fold = calibration.initial();
  let background = calibration.initial();
  for await (const event of store.read({ continuity })) {
    reduceEvent(state, event);
    const thread = event.stream.kind === "step" ? parseStepStreamId(event.stream.id).thread : "";
    if (isBackgroundThread(thread)) background = calibration.reduce(background, event);
    else if (!isChildThread(thread)) fold = calibration.reduce(fold, event);
    observe?.(event);
  }
  return { state, calibration: fold.state, backgroundCalibration: background.state };
}

/**
 * True for an `agent` action's child thread, `<thread>:<step>@<action>`. A child runs beside its
 * parent's stream, so it calibrates a token estimator of its own from its own steps alone: the
 * parent's estimates (and the child's) then do not depend on which of the two reported usage
 * first, and a replay that interleaves them differently compiles the same contexts.
 */
export function isChildThread(thread: string): boolean {
  const at = thread.lastIndexOf("@");
  return at > 0 && /:\d+$/.test(thread.slice(0, at));
}

/**
 * True for a thread that runs beside the foreground (a summarizer, a hook's directive), from its
 * id alone: `<thread>@summary<n>` or `<thread>@hook<n>`, where `<thread>` is not a step (an
 * `agent` child is `<thread>:<step>@<action>`, whatever its action id). Such threads calibrate a
 * token estimator of their own, so the foreground's estimates (and the contexts they choose) do
 * not depend on when background work finished; views leave them out of the conversation.
 */
export function isBackgroundThread(thread: string): boolean {
  const at = thread.lastIndexOf("@");
  return (
    at > 0 && /^(summary|hook)\d+$/.test(thread.slice(at + 1)) && !/:\d+$/.test(thread.slice(0, at))
  );
}
