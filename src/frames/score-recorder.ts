import type { EventData } from "../spec/index.js";
import type { ScoredFrame } from "./frame-types.js";

/** The data of one `frame.scores-recorded` event. */
export type RecordedScores = EventData<"frame.scores-recorded">;

/** The most scores one recorded interval holds before it is cut short. */
export const SCORES_PER_RECORD = 600;

/**
 * Gathers a source's change scores into compact records, one per `intervalMs` of frame time (or
 * per `SCORES_PER_RECORD` frames, whichever comes first): the bounded-rate record another process
 * reads as "recent scores". Pure: it only returns what to log.
 */
export class ScoreRecorder {
  readonly source: string;
  readonly intervalMs: number;
  #open: RecordedScores | undefined;
  #counts = { duplicates: 0, rate_dropped: 0, queue_dropped: 0, noted: 0 };

  constructor(source: string, intervalMs: number) {
    this.source = source;
    this.intervalMs = intervalMs;
  }

  /** Adds a scored frame; returns the finished record when this frame closes an interval. */
  add(scored: ScoredFrame): RecordedScores | undefined {
    const { frame, change } = scored;
    const done =
      this.#open !== undefined &&
      (frame.at - this.#open.from >= this.intervalMs ||
        this.#open.scores.length >= SCORES_PER_RECORD ||
        frame.at < this.#open.from)
        ? this.flush()
        : undefined;
    this.#open ??= this.#empty(frame.at);
    const open = this.#open;
    const index = open.scores.length;
    open.offsets.push(frame.at - open.from);
    open.scores.push(Math.round(change.score * 10_000) / 10_000);
    if (change.sceneCut) open.cuts.push(index);
    if (change.forced) open.forced.push(index);
    if (change.duplicate) this.#counts.duplicates += 1;
    open.ema = Math.min(1, Math.round(change.ema * 10_000) / 10_000);
    return done;
  }

  /** Counts a frame dropped by the rate limit. */
  rateDropped(): void {
    this.#counts.rate_dropped += 1;
  }

  /** Counts scored frames dropped because the consumer fell behind. */
  queueDropped(count: number): void {
    this.#counts.queue_dropped += count;
  }

  /** Counts a frame the consumer noted. */
  noted(): void {
    this.#counts.noted += 1;
  }

  /** The open record (undefined when nothing was scored since the last), which is closed. */
  flush(): RecordedScores | undefined {
    const open = this.#open;
    this.#open = undefined;
    if (!open) return undefined;
    const record = { ...open, ...this.#counts };
    this.#counts = { duplicates: 0, rate_dropped: 0, queue_dropped: 0, noted: 0 };
    return record;
  }

  #empty(from: number): RecordedScores {
    return {
      source: this.source,
      from,
      offsets: [],
      scores: [],
      cuts: [],
      forced: [],
      ema: 0,
      duplicates: 0,
      rate_dropped: 0,
      queue_dropped: 0,
      noted: 0,
    };
  }
}
