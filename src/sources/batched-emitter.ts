import { ChunkBatcher } from "./chunk-batcher.js";
import type { SplitLine } from "./line-splitter.js";
import type {
  SourceContext,
  SourceCursor,
  SourceDefinition,
  SourceEmission,
  SourceFailedEmission,
} from "./source-types.js";

/**
 * Thrown inside an adapter once its runner stopped (an `emit` rejected) or its signal aborted:
 * the adapter unwinds to `run`, which catches it and returns without emitting more.
 */
export class SourceStopped extends Error {
  constructor() {
    super("the source was stopped");
    this.name = "SourceStopped";
  }
}

/**
 * How a pull-style adapter (file, dataset, command) hands emissions to its runner: lines go
 * through one `ChunkBatcher`, each completed chunk is emitted and awaited before the adapter reads
 * on (backpressure), and the adapter asks `msUntilDue` how long it may wait before the held chunk
 * is due (`maxWaitMs` after its first line). Every emission but `fail` throws `SourceStopped` once
 * the runner stopped or the signal aborted. A held chunk is not emitted on stop: its lines are
 * re-read from the last logged cursor.
 */
export class BatchedEmitter {
  readonly #batcher: ChunkBatcher;
  readonly #context: SourceContext;
  readonly #maxWaitMs: number;
  readonly #now: () => number;
  #heldSince: number | undefined;
  #stopped = false;

  /** `now`: a monotonic clock in milliseconds (default `performance.now`). */
  constructor(
    definition: SourceDefinition,
    context: SourceContext,
    now: () => number = () => performance.now(),
  ) {
    this.#batcher = new ChunkBatcher(definition);
    this.#context = context;
    this.#maxWaitMs = Math.max(0, definition.batching.maxWaitMs);
    this.#now = now;
  }

  /** True once the runner refused an emission or the signal aborted. */
  get stopped(): boolean {
    return this.#stopped || this.#context.signal.aborted;
  }

  /** Adds one line with the cursor after it, emitting the chunk(s) it completes. */
  async add(line: SplitLine, cursor: SourceCursor, channel?: "stdout" | "stderr"): Promise<void> {
    const chunk = this.#batcher.add(line, cursor, channel);
    if (chunk !== undefined) await this.#emit(chunk);
    if (this.#batcher.ready) await this.#emit(this.#batcher.flush()!);
    if (!this.#batcher.holding) this.#heldSince = undefined;
    else this.#heldSince ??= this.#now();
  }

  /** Emits the chunk held so far, if any. */
  async flush(): Promise<void> {
    this.#heldSince = undefined;
    while (this.#batcher.holding) await this.#emit(this.#batcher.flush()!);
  }

  /** Emits the held chunk if `maxWaitMs` has passed since its first line. */
  async flushIfDue(): Promise<void> {
    if (this.msUntilDue() === 0) await this.flush();
  }

  /** Milliseconds until the held chunk is due (0: now), or undefined when nothing is held. */
  msUntilDue(): number | undefined {
    if (this.#heldSince === undefined) return undefined;
    return Math.max(0, Math.ceil(this.#heldSince + this.#maxWaitMs - this.#now()));
  }

  /** How long to wait for more input: `ms`, or less when the held chunk falls due sooner. */
  waitMs(ms: number): number {
    return Math.min(ms, this.msUntilDue() ?? ms);
  }

  /**
   * Emits a notice, rotation, end, or a chunk made by the adapter itself, after the held chunk
   * (lines read before it come first).
   */
  async send(emission: Exclude<SourceEmission, { type: "failed" }>): Promise<void> {
    await this.flush();
    await this.#emit(emission);
  }

  /**
   * Ends the run with `failed`: the held chunk first, then the failure (with `cursor` when one is
   * known). Never throws; does nothing once stopped.
   */
  async fail(emission: SourceFailedEmission): Promise<void> {
    try {
      await this.flush();
      await this.#emit(emission);
    } catch {
      // stopped: the runner no longer listens
    }
  }

  async #emit(emission: SourceEmission): Promise<void> {
    if (this.stopped) throw new SourceStopped();
    try {
      await this.#context.emit(emission);
    } catch {
      this.#stopped = true;
      throw new SourceStopped();
    }
  }
}
