import type { EventStore } from "../log/index.js";
import { isEvent, type SpoolEvent } from "../spec/index.js";

/** One recorded score. */
export interface RecordedScore {
  at: number;
  score: number;
  sceneCut: boolean;
  forced: boolean;
}

/** What the log says about one frame source: for `spool frames` and status lines. */
export interface FrameSourceState {
  source: string;
  kind?: string;
  target?: string;
  status: "running" | "stopped" | "failed";
  /** The last failure (final or not), as logged. */
  lastError?: { code: string; message: string; final: boolean; stderrTail?: string };
  /** Frames refused, by reason. */
  rejected: Record<string, number>;
  /** The newest scores, oldest first (at most the fold's `recent`). */
  recent: RecordedScore[];
  /** The score EMA as last recorded. */
  ema: number;
  scored: number;
  sceneCuts: number;
  rateDropped: number;
  queueDropped: number;
  noted: number;
}

/** The event types `readFrameSources` folds. */
export const FRAME_STATE_EVENT_TYPES = [
  "frame.source-started",
  "frame.source-stopped",
  "frame.source-failed",
  "frame.rejected",
  "frame.scores-recorded",
] as const;

/**
 * Folds one frame event into the state of the frame sources (by source id), keeping the newest
 * `recent` scores of each. Pure; ignores other events.
 */
export function applyFrameEvent(
  state: Map<string, FrameSourceState>,
  event: SpoolEvent,
  recent = 120,
): Map<string, FrameSourceState> {
  const of = (source: string): FrameSourceState => {
    let found = state.get(source);
    if (!found) {
      found = {
        source,
        status: "running",
        rejected: {},
        recent: [],
        ema: 0,
        scored: 0,
        sceneCuts: 0,
        rateDropped: 0,
        queueDropped: 0,
        noted: 0,
      };
      state.set(source, found);
    }
    return found;
  };
  if (isEvent(event, "frame.source-started")) {
    const entry = of(event.data.source);
    Object.assign(entry, { kind: event.data.kind, target: event.data.target, status: "running" });
  } else if (isEvent(event, "frame.source-stopped")) {
    of(event.data.source).status = "stopped";
  } else if (isEvent(event, "frame.source-failed")) {
    const entry = of(event.data.source);
    const { code, message } = event.data.error;
    entry.lastError = {
      code,
      message,
      final: event.data.final,
      ...(event.data.stderr_tail ? { stderrTail: event.data.stderr_tail } : {}),
    };
    if (event.data.final) entry.status = "failed";
  } else if (isEvent(event, "frame.rejected")) {
    const entry = of(event.data.source);
    entry.rejected[event.data.reason] = (entry.rejected[event.data.reason] ?? 0) + event.data.count;
  } else if (isEvent(event, "frame.scores-recorded")) {
    const { data } = event;
    const entry = of(data.source);
    const cuts = new Set(data.cuts);
    const forced = new Set(data.forced);
    data.scores.forEach((score, index) => {
      entry.recent.push({
        at: data.from + (data.offsets[index] ?? 0),
        score,
        sceneCut: cuts.has(index),
        forced: forced.has(index),
      });
    });
    if (entry.recent.length > recent) entry.recent.splice(0, entry.recent.length - recent);
    entry.ema = data.ema;
    entry.scored += data.scores.length;
    entry.sceneCuts += data.cuts.length;
    entry.rateDropped += data.rate_dropped;
    entry.queueDropped += data.queue_dropped;
    entry.noted += data.noted;
  }
  return state;
}

/**
 * The frame sources of a continuity as its log tells them (readable by any process: `spool
 * frames`), with each one's newest `recent` scores. Reads only frame events.
 */
export async function readFrameSources(
  store: EventStore,
  continuity: string,
  options: { recent?: number; after?: number } = {},
): Promise<FrameSourceState[]> {
  const state = await store.fold(
    {
      continuity,
      types: FRAME_STATE_EVENT_TYPES,
      ...(options.after !== undefined ? { after: options.after } : {}),
    },
    {
      initial: () => new Map<string, FrameSourceState>(),
      reduce: (sources, event) => applyFrameEvent(sources, event, options.recent ?? 120),
    },
  );
  return [...state.values()];
}
