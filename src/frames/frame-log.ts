import type { EventStore } from "../log/index.js";
import type { AnyNewEvent } from "../spec/index.js";
import type { FrameSourceEvent } from "./frame-source.js";
import type { FrameRef } from "./frame-types.js";
import type { RecordedScores } from "./score-recorder.js";

/** Where a frame watch logs: the store and the continuity its source streams belong to. */
export interface FrameLogTarget {
  store: EventStore;
  continuity: string;
}

/**
 * Appends one frame source's events to its stream (`{ kind: "source", id }`), in order. Appends
 * are chained, not awaited by the frame path (a critical append waits for a commit); `settled`
 * waits for all of them. A failed append is counted and handed to `onFailure`, never thrown.
 */
export class FrameLog {
  readonly #target: FrameLogTarget;
  readonly #source: string;
  readonly #onFailure: (error: unknown) => void;
  #chain: Promise<void> = Promise.resolve();
  failures = 0;

  constructor(target: FrameLogTarget, source: string, onFailure: (error: unknown) => void) {
    this.#target = target;
    this.#source = source;
    this.#onFailure = onFailure;
  }

  /** Logs a source status event (`rejected` ones as droppable `frame.rejected`). */
  sourceEvent(event: FrameSourceEvent): void {
    const source = this.#source;
    if (event.type === "started") {
      this.#append({
        type: "frame.source-started",
        data: {
          source,
          kind: event.kind,
          target: event.target.slice(0, 4_096),
          ...(event.fps ? { fps: event.fps } : {}),
        },
      });
    } else if (event.type === "stopped") {
      this.#append({
        type: "frame.source-stopped",
        data: { source, reason: event.reason, frames: event.frames },
      });
    } else if (event.type === "failed") {
      this.#append({
        type: "frame.source-failed",
        data: {
          source,
          error: {
            code: event.error.code,
            message: event.error.message.slice(0, 20_000),
            retryable: event.error.retryable,
          },
          final: event.final,
          ...(event.exitCode !== undefined ? { exit_code: event.exitCode } : {}),
          ...(event.stderrTail ? { stderr_tail: event.stderrTail.slice(-4_096) } : {}),
        },
      });
    } else {
      this.#append({
        type: "frame.rejected",
        data: {
          source,
          reason: event.reason,
          bytes: event.bytes,
          at: Math.max(0, Math.round(event.at)),
          count: 1,
          ...(event.detail ? { detail: event.detail.slice(0, 1_000) } : {}),
        },
      });
    }
  }

  /** Logs one interval's scores. */
  scores(record: RecordedScores): void {
    this.#append({ type: "frame.scores-recorded", data: record });
  }

  /** Logs that a frame was stored as an artifact (`artifact.stored`, purpose `frame`). */
  kept(frame: FrameRef): void {
    this.#append({
      type: "artifact.stored",
      data: {
        hash: frame.hash,
        size: frame.bytes,
        media_type: frame.mime,
        name: `${frame.source}@${new Date(frame.at).toISOString()}`,
        purpose: "frame",
      },
    });
  }

  /** Resolves once every append so far has been written (or failed). */
  settled(): Promise<void> {
    return this.#chain;
  }

  #append(event: Omit<AnyNewEvent, "continuity" | "stream">): void {
    const full = {
      ...event,
      continuity: this.#target.continuity,
      stream: { kind: "source" as const, id: this.#source },
    } as AnyNewEvent;
    const written = this.#target.store.append(full).then(
      () => undefined,
      (error: unknown) => {
        this.failures += 1;
        this.#onFailure(error);
      },
    );
    this.#chain = this.#chain.then(() => written);
  }
}
