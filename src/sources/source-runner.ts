import type { EventStore } from "../log/index.js";
import {
  type AnyNewEvent,
  EventValidationError,
  eventSpec,
  SpoolError,
  type SpoolErrorOptions,
  type SpoolEvent,
} from "../spec/index.js";
import {
  chunkEventData,
  compilePatterns,
  DEFAULT_ARTIFACT_BYTES,
  type PatternMatchers,
} from "./source-chunk.js";
import type { Source, SourceCursor, SourceEmission } from "./source-types.js";

/** Options of `startSourceRunner`. */
export interface SourceRunnerOptions {
  store: EventStore;
  continuity: string;
  source: Source;
  /** Where it stands (from the fold): chunks so far and the cursor to resume from. */
  position: { chunks: number; cursor: SourceCursor | undefined };
  /**
   * Awaited before chunk n is logged (pacing: a dataset waits until the agent took chunk n-1);
   * default none. It should reject once `signal` aborts; the chunk is then not logged.
   */
  pace?: (n: number, signal: AbortSignal) => Promise<void>;
  /** Called with each event the runner appended, after it is durable. Must not throw (ignored). */
  appended?: (event: SpoolEvent) => void;
  /** Chunks whose lines take more bytes than this go into an artifact (default 256 KiB). */
  artifactBytes?: number;
}

/**
 * Why a runner ended: its input `exhausted`; the source `failed` for good (also a source that
 * threw, or handed an emission the catalog refuses: `source.bad-emission`); `stopped` by
 * `stop()`; the store `refused` an append (closed, lease lost; `error` says which); or the
 * source `returned` on its own without saying why.
 */
export interface SourceRunnerOutcome {
  reason: "exhausted" | "failed" | "stopped" | "refused" | "returned";
  error?: unknown;
}

/** One source being read into the log. */
export interface SourceRunner {
  readonly id: string;
  /** Resolves when the source's run returned (exhausted, failed, or stopped); never rejects. */
  readonly done: Promise<void>;
  /** Why it ended, once `done` resolved; undefined before. */
  readonly outcome: SourceRunnerOutcome | undefined;
  /** Aborts the source and waits for it; idempotent. */
  stop(): Promise<void>;
}

/** Codes with which a runner rejects an emission it will not log. */
export type SourceRunnerErrorCode = "source.stopped" | "source.ended";

/** An emission the runner refused because it was stopped or its source already ended. */
export class SourceRunnerError extends SpoolError {
  declare readonly code: SourceRunnerErrorCode;

  constructor(code: SourceRunnerErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}

const MAX_MESSAGE = 20_000;
const clip = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/**
 * Starts reading `source` into the log: appends `source.started` (kind, target, the cursor it
 * resumes from), runs the source, and logs each emission on the stream `{ kind: "source", id }`:
 * a chunk as `source.chunk` numbered `position.chunks + 1`,
 * `+ 2`, … with its cursor in the same event (lines inline, or in an artifact over
 * `artifactBytes`); `rotated` as `source.rotated`; a notice as `source.failed` with `final:
 * false`; `exhausted` as `source.exhausted`; `failed` as `source.failed` with `final: true`.
 *
 * Emissions are logged in the order they were emitted. Up to `IN_FLIGHT` of them may be on
 * their way to the log at once (the store commits them together), so `emit` resolves as soon as
 * its emission is queued behind fewer than that, and otherwise once the oldest one is durable:
 * a source reads ahead of the log by a bounded amount. That loses nothing on a crash: a new
 * runner resumes from the cursor of the last chunk that is durable, and reads again whatever
 * was not. Once stopped, ended or refused, `emit` rejects (`SourceRunnerError`, or the store's
 * `StoreError`) and logs nothing more; appends already under way complete. A failed append (the
 * store closed, the lease lost) stops the runner; nothing ever throws out of `done`. So the log
 * alone says where a new runner resumes: every logged chunk once, none lost.
 */
export function startSourceRunner(options: SourceRunnerOptions): SourceRunner {
  const runner = new Runner(options);
  return {
    id: runner.id,
    done: runner.done,
    get outcome() {
      return runner.outcome;
    },
    stop: () => runner.stop(),
  };
}

/** Emissions on their way to the log at once, at most (see `startSourceRunner`). */
export const IN_FLIGHT = 16;

/** The state of one running source: its position, its queue of emissions, how it ended. */
class Runner {
  readonly id: string;
  readonly done: Promise<void>;
  outcome: SourceRunnerOutcome | undefined;
  private readonly controller = new AbortController();
  private readonly matchers: PatternMatchers;
  private chunks: number;
  private ended: SourceRunnerOutcome | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Appends issued and not yet durable, oldest first. */
  private readonly inFlight: Promise<void>[] = [];

  constructor(private readonly options: SourceRunnerOptions) {
    this.id = options.source.definition.id;
    this.chunks = options.position.chunks;
    this.matchers = compilePatterns(options.source.definition);
    this.done = this.run().catch((error: unknown) => {
      this.outcome ??= { reason: "refused", error };
    });
  }

  stop(): Promise<void> {
    this.controller.abort();
    return this.done;
  }

  private async run(): Promise<void> {
    const { source, position } = this.options;
    const { kind, target } = source.definition;
    try {
      await this.append({
        type: "source.started",
        data: {
          source_id: this.id,
          kind,
          target: clip(target, 4_096),
          ...(position.cursor ? { cursor: position.cursor } : {}),
        },
      });
    } catch (error) {
      this.outcome = { reason: "refused", error };
      return;
    }
    const signal = this.controller.signal;
    try {
      await source.run({
        cursor: position.cursor,
        signal,
        emit: (emission) => this.emit(emission),
      });
    } catch (error) {
      if (!this.ended && !signal.aborted) {
        const message = `the source threw: ${error instanceof Error ? error.message : String(error)}`;
        await this.emit({ type: "failed", code: "source.crashed", message }).catch(() => {});
      }
    }
    await this.queue.catch(() => {});
    await Promise.allSettled([...this.inFlight]);
    this.outcome = this.ended ?? { reason: signal.aborted ? "stopped" : "returned" };
  }

  /**
   * Queues `emission` behind the ones before it: each is prepared (numbered, paced, checked) in
   * order and its append is issued in order, without waiting for the one before to be durable.
   * Resolves once fewer than `IN_FLIGHT` emissions are still on their way to the log.
   */
  private emit(emission: SourceEmission): Promise<void> {
    const issued = this.queue.then(() => this.issue(emission));
    this.queue = issued.catch(() => {});
    const durable = issued.then(({ append }) => append);
    durable.catch(() => {});
    this.inFlight.push(durable);
    const settle = () => {
      this.inFlight.splice(this.inFlight.indexOf(durable), 1);
    };
    durable.then(settle, settle);
    if (this.inFlight.length > IN_FLIGHT) return durable;
    // Resolves once issued, unless the append was refused by then (a closed store refuses at
    // once): `race` settles with the first of them already settled, in order.
    return issued.then(({ append }) => Promise.race([append, undefined]));
  }

  /**
   * Prepares `emission` and issues its append; resolves (once issued) with the append, boxed: a
   * promise returned bare from an async function is adopted, and `issued` would then wait for
   * the append to be durable, one chunk per transaction.
   */
  private async issue(emission: SourceEmission): Promise<{ append: Promise<void> }> {
    this.checkOpen();
    try {
      if (emission.type === "chunk") {
        const n = this.chunks + 1;
        if (this.options.pace) await this.options.pace(n, this.controller.signal);
        this.checkOpen();
        const data = await chunkEventData(
          this.options.store,
          this.id,
          n,
          emission,
          this.matchers,
          this.options.artifactBytes ?? DEFAULT_ARTIFACT_BYTES,
        );
        const event = checked({ type: "source.chunk", data });
        this.chunks = n;
        return { append: this.watch(this.append(event)) };
      }
      const event = checked(this.eventOf(emission));
      if (emission.type === "exhausted") this.ended = { reason: "exhausted" };
      if (emission.type === "failed") this.ended = { reason: "failed" };
      return { append: this.watch(this.append(event)) };
    } catch (error) {
      if (error instanceof SourceRunnerError) throw error;
      if (error instanceof EventValidationError) throw await this.refuseEmission(emission, error);
      if (this.controller.signal.aborted) throw this.stoppedError();
      this.ended = { reason: "refused", error };
      this.controller.abort();
      throw error;
    }
  }

  /** An append's outcome: a refusal (the store closed, the lease lost) ends the runner. */
  private watch(append: Promise<void>): Promise<void> {
    return append.catch((error: unknown) => {
      if (this.ended?.reason !== "refused") this.ended = { reason: "refused", error };
      this.controller.abort();
      throw error;
    });
  }

  /** An emission the catalog refuses is a bug of its adapter: logged as its final failure. */
  private async refuseEmission(
    emission: SourceEmission,
    error: EventValidationError,
  ): Promise<EventValidationError> {
    const message = `the ${this.options.source.definition.kind} adapter emitted a ${emission.type} the log refuses: ${error.message}`;
    try {
      await this.append({
        type: "source.failed",
        data: {
          source_id: this.id,
          error: { code: "source.bad-emission", message: clip(message, MAX_MESSAGE) },
          final: true,
        },
      });
      this.ended = { reason: "failed", error };
    } catch (appendError) {
      this.ended = { reason: "refused", error: appendError };
    }
    this.controller.abort();
    return error;
  }

  private eventOf(
    emission: Exclude<SourceEmission, { type: "chunk" }>,
  ): Omit<AnyNewEvent, "continuity"> {
    const source_id = this.id;
    switch (emission.type) {
      case "rotated":
        return {
          type: "source.rotated",
          data: {
            source_id,
            reason: emission.reason,
            cursor: emission.cursor,
            ...(emission.detail !== undefined ? { detail: clip(emission.detail, 4_096) } : {}),
          },
        };
      case "notice":
        return {
          type: "source.failed",
          data: {
            source_id,
            error: {
              code: clip(emission.code, 200),
              message: clip(emission.message, MAX_MESSAGE),
              retryable: true,
            },
            final: false,
            ...(emission.exitCode !== undefined ? { exit_code: emission.exitCode } : {}),
            ...(emission.retryInMs !== undefined
              ? { retry_in_ms: Math.max(0, Math.round(emission.retryInMs)) }
              : {}),
          },
        };
      case "exhausted":
        return { type: "source.exhausted", data: { source_id, cursor: emission.cursor } };
      case "failed":
        return {
          type: "source.failed",
          data: {
            source_id,
            error: { code: clip(emission.code, 200), message: clip(emission.message, MAX_MESSAGE) },
            final: true,
            ...(emission.cursor ? { cursor: emission.cursor } : {}),
          },
        };
    }
  }

  private checkOpen(): void {
    if (this.ended) {
      throw new SourceRunnerError(
        "source.ended",
        `source "${this.id}" already ended (${this.ended.reason}); nothing more is logged`,
      );
    }
    if (this.controller.signal.aborted) throw this.stoppedError();
  }

  private stoppedError(): SourceRunnerError {
    return new SourceRunnerError("source.stopped", `source "${this.id}" was stopped`);
  }

  private async append(event: Omit<AnyNewEvent, "continuity">): Promise<void> {
    const stored = await this.options.store.append({
      ...event,
      continuity: this.options.continuity,
      stream: { kind: "source", id: this.id },
    } as AnyNewEvent);
    try {
      this.options.appended?.(stored);
    } catch {
      // The event is durable already; a listener's failure is the listener's to report.
    }
  }
}

/** `event` if the catalog accepts its data; else an `EventValidationError`, before any append. */
function checked(event: Omit<AnyNewEvent, "continuity">): Omit<AnyNewEvent, "continuity"> {
  const spec = eventSpec(event.type);
  if (!spec || spec.fastData?.(event.data) !== undefined) return event;
  const parsed = spec.schema.safeParse(event.data);
  if (parsed.success) return event;
  throw new EventValidationError(
    event.type,
    parsed.error.issues.map((issue) => ({
      path: ["data", ...issue.path.map(String)].join("."),
      message: issue.message,
    })),
  );
}
