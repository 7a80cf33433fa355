import { BoundedQueue, type OverflowPolicy } from "./bounded-queue.js";
import { ChangeScorer, type ChangeScorerOptions } from "./change-scorer.js";
import { FrameError } from "./frame-error.js";
import { FrameLimiter, type FrameLimits } from "./frame-limits.js";
import { FrameLog, type FrameLogTarget } from "./frame-log.js";
import type { FrameSourceEvent, FrameSourceOptions } from "./frame-source.js";
import { FrameStorage, type LatestFrame } from "./frame-storage.js";
import type { FrameRef, IncomingFrame, ScoredFrame } from "./frame-types.js";
import { ScoreRecorder } from "./score-recorder.js";

/** What a watch hands its source when it opens it. */
export type FrameSourceHooks = Required<
  Pick<FrameSourceOptions, "source" | "signal" | "onEvent" | "maxFrameBytes">
>;

/** Options of `watchFrames`. */
export interface FrameWatchOptions {
  /** The source's id: on every frame, event and the latest-frame file. */
  source: string;
  /** Opens the source with the watch's signal, event listener and byte limit, e.g. `(hooks) => videoFrames({ ...hooks, input, fps: 2 })`. */
  open: (hooks: FrameSourceHooks) => AsyncIterable<IncomingFrame>;
  limits?: Partial<FrameLimits>;
  /** A scorer, or options for a new one. */
  scorer?: ChangeScorer | ChangeScorerOptions;
  /** Where frames are remembered and kept (a new one without artifacts or files when absent). */
  storage?: FrameStorage;
  /** Where the source's events and scores are logged; nothing is logged when absent. */
  log?: FrameLogTarget & {
    /** Frame time (ms) each `frame.scores-recorded` covers at most (default 5,000). */
    scoresIntervalMs?: number;
  };
  /**
   * When the consumer falls behind: `latest` (default) drops the oldest scored frame so the
   * newest always gets in (live sources); `wait` stops reading the source until it catches up
   * (files, directories: every frame is scored and delivered).
   */
  overflow?: OverflowPolicy;
  /** Scored frames waiting for the consumer at most (default 4). */
  queue?: number;
  /** Stops the watch (and its source). */
  signal?: AbortSignal;
  /** Every source event, every rejected frame, and log failures (as non-final `failed`). */
  onEvent?: (event: FrameSourceEvent) => void;
}

/** Counters of a watch, for status lines and tests. */
export interface FrameWatchStats {
  /** Frames the source produced. */
  received: number;
  scored: number;
  rejected: number;
  /** Dropped by `maxFramesPerMinute` before decoding. */
  rateDropped: number;
  /** Scored but dropped because the consumer fell behind. */
  queueDropped: number;
  noted: number;
}

/**
 * One frame source through the limits, the change scorer and storage: an async iterable of
 * `ScoredFrame`s, with `noted` and `keep` for its consumer.
 *
 * Contract: memory is bounded (the source is read by one pump; at most `queue` scored frames
 * wait, per `overflow`); bad frames become `rejected` events and the watch goes on; the source's
 * end or failure ends the iteration after its events were logged: the iteration never throws.
 * Iterate once; breaking out of the loop (or the signal) stops the source.
 */
export class FrameWatch implements AsyncIterable<ScoredFrame> {
  readonly source: string;
  readonly scorer: ChangeScorer;
  readonly storage: FrameStorage;
  readonly limiter: FrameLimiter;
  readonly stats: FrameWatchStats = {
    received: 0,
    scored: 0,
    rejected: 0,
    rateDropped: 0,
    queueDropped: 0,
    noted: 0,
  };
  readonly #options: FrameWatchOptions;
  readonly #queue: BoundedQueue<ScoredFrame>;
  readonly #stop = new AbortController();
  readonly #recorder: ScoreRecorder;
  readonly #log: FrameLog | undefined;
  #started = false;

  constructor(options: FrameWatchOptions) {
    this.#options = options;
    this.source = options.source;
    this.limiter = new FrameLimiter(options.limits);
    this.scorer =
      options.scorer instanceof ChangeScorer ? options.scorer : new ChangeScorer(options.scorer);
    this.#queue = new BoundedQueue(options.queue ?? 4, options.overflow ?? "latest");
    this.#recorder = new ScoreRecorder(options.source, options.log?.scoresIntervalMs ?? 5_000);
    this.#log = options.log
      ? new FrameLog(options.log, options.source, (error) =>
          this.#emit({
            type: "failed",
            source: options.source,
            final: false,
            error: new FrameError(
              "frame.store-failed",
              `a frame event could not be logged: ${error instanceof Error ? error.message : String(error)}`,
              { cause: error, retryable: true },
            ),
          }),
        )
      : undefined;
    this.storage = options.storage ?? new FrameStorage();
    if (options.signal?.aborted) this.#stop.abort();
    options.signal?.addEventListener("abort", () => this.#stop.abort(), { once: true });
  }

  /** The latest scored frame of this source, bytes included. */
  latest(): LatestFrame | undefined {
    return this.storage.latest(this.source);
  }

  /** Later frames are scored against `frame` (see `ChangeScorer.noted`). */
  noted(frame: FrameRef): void {
    this.scorer.noted(frame, this.storage.bytes(frame.hash));
    this.stats.noted += 1;
    this.#recorder.noted();
  }

  /** Stores `frame` as an artifact (see `FrameStorage.keep`); logs `artifact.stored` the first time. */
  async keep(frame: FrameRef): Promise<FrameRef> {
    const { first } = await this.storage.keep(frame);
    if (first) this.#log?.kept(frame);
    return frame;
  }

  /** Stops the source; the iteration ends once its last events are logged. */
  stop(): void {
    this.#stop.abort();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ScoredFrame> {
    if (this.#started)
      throw new FrameError("frame.bad-option", "a frame watch is iterated once", {
        hint: "Make a new watch to read the source again",
      });
    this.#started = true;
    const pumping = this.#pump();
    try {
      for (;;) {
        const next = await this.#queue.take();
        if (!next) break;
        yield next.droppedBefore > 0 ? { ...next.item, skipped: next.droppedBefore } : next.item;
      }
    } finally {
      this.#stop.abort();
      this.#queue.end();
      await pumping;
    }
  }

  async #pump(): Promise<void> {
    const hooks: FrameSourceHooks = {
      source: this.source,
      signal: this.#stop.signal,
      onEvent: (event) => this.#sourceEvent(event),
      maxFrameBytes: this.limiter.limits.maxFrameBytes,
    };
    try {
      for await (const frame of this.#options.open(hooks)) {
        if (this.#stop.signal.aborted) break;
        await this.#take(frame);
      }
    } catch (error) {
      // A source is meant to report its failures as events; one that throws anyway is reported here.
      this.#sourceEvent({
        type: "failed",
        source: this.source,
        final: true,
        error:
          error instanceof FrameError
            ? error
            : new FrameError(
                "frame.bad-option",
                `the frame source failed: ${error instanceof Error ? error.message : String(error)}`,
                { cause: error },
              ),
      });
    } finally {
      this.#record(this.#recorder.flush());
      await this.#log?.settled();
      this.#queue.end();
    }
  }

  async #take(frame: IncomingFrame): Promise<void> {
    this.stats.received += 1;
    const admission = this.limiter.admit(frame);
    if (!admission.admit) {
      if (admission.reason === "rate") {
        this.stats.rateDropped += 1;
        this.#recorder.rateDropped();
        return;
      }
      const limit =
        admission.reason === "too-big" ? ` (limit ${this.limiter.limits.maxFrameBytes})` : "";
      this.#sourceEvent({
        type: "rejected",
        source: this.source,
        reason: admission.reason,
        bytes: admission.bytes,
        at: frame.at,
        detail: `${admission.bytes} bytes${limit}`,
      });
      return;
    }
    let scored: ScoredFrame;
    try {
      scored = await this.scorer.score(admission.frame);
    } catch (error) {
      const code = error instanceof FrameError ? error.code : "frame.undecodable";
      const reason =
        code === "frame.empty"
          ? "empty"
          : code === "frame.unsupported"
            ? "unsupported"
            : "undecodable";
      this.#sourceEvent({
        type: "rejected",
        source: this.source,
        reason,
        bytes: frame.data.length,
        at: frame.at,
        detail: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    this.stats.scored += 1;
    try {
      await this.storage.remember(
        scored.frame,
        admission.frame.data,
        admission.frame.keyframe === true,
      );
    } catch (error) {
      this.#emit({ type: "failed", source: this.source, final: false, error: error as FrameError });
    }
    this.#record(this.#recorder.add(scored));
    const before = this.#queue.dropped;
    await this.#queue.push(scored);
    const dropped = this.#queue.dropped - before;
    if (dropped > 0) {
      this.stats.queueDropped += dropped;
      this.#recorder.queueDropped(dropped);
    }
  }

  #record(record: ReturnType<ScoreRecorder["flush"]>): void {
    if (record) this.#log?.scores(record);
  }

  #sourceEvent(event: FrameSourceEvent): void {
    if (event.type === "rejected") this.stats.rejected += 1;
    this.#log?.sourceEvent(event);
    this.#emit(event);
  }

  #emit(event: FrameSourceEvent): void {
    this.#options.onEvent?.(event);
  }
}

/** Starts nothing: returns the watch; iterating it opens the source (see `FrameWatch`). */
export function watchFrames(options: FrameWatchOptions): FrameWatch {
  return new FrameWatch(options);
}
