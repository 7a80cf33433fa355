import { ChunkBatcher } from "./chunk-batcher.js";
import type { SplitLine } from "./line-splitter.js";
import type {
  SourceContext,
  SourceCursor,
  SourceDefinition,
  SourceEmission,
} from "./source-types.js";

/**
 * The cursor to log if a chunk ends right after line `linesDone` (1-based) of a unit (an HTTP
 * body, an SSE or WebSocket message): after the unit's last line it is where the source stands
 * once the whole unit is delivered; before it, it says how much of the unit is.
 */
export type CursorAfterLine = (linesDone: number) => SourceCursor;

/**
 * How a network source hands lines to its runner: one `ChunkBatcher`, the `maxWaitMs` timer that
 * flushes what it holds, and one queue through which every emission passes in order, each awaited
 * before the next (backpressure). A unit's lines are added without a flush in between, so a timer
 * flush lands only between units. It never throws: a rejected `emit` (the runner stopped) marks it
 * `stopped`, after which it emits nothing more; an abort stops it too, even while the runner still
 * holds an emission. A held chunk is not emitted when the source stops:
 * its lines are re-read from the last logged cursor where the protocol allows it.
 */
export class LineDelivery {
  readonly #batcher: ChunkBatcher;
  readonly #context: SourceContext;
  readonly #maxWaitMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  #stopped = false;
  #fault: unknown;

  constructor(definition: SourceDefinition, context: SourceContext) {
    this.#batcher = new ChunkBatcher(definition);
    this.#context = context;
    this.#maxWaitMs = definition.batching.maxWaitMs;
  }

  /** True once the runner refused an emission or the source's signal aborted. */
  get stopped(): boolean {
    return this.#stopped || this.#context.signal.aborted;
  }

  /** True while an emission or a unit's delivery is queued or under way. */
  get busy(): boolean {
    return this.#pending > 0;
  }

  /** An error thrown inside a timer flush (a bug, never an input problem), if one was. */
  get fault(): unknown {
    return this.#fault;
  }

  /** Resolves once everything queued so far has been emitted (or dropped because it stopped). */
  idle(): Promise<void> {
    return this.#chain;
  }

  /**
   * Adds a unit's lines from index `skip` on (lines already delivered before a restart are
   * skipped), emitting each chunk they complete; with `flush`, also the chunk held at the end.
   * Resolves `false` when the source stopped.
   */
  deliver(
    lines: readonly SplitLine[],
    cursorAfter: CursorAfterLine,
    options: { skip?: number; flush?: boolean } = {},
  ): Promise<boolean> {
    return this.#exclusive(async () => {
      for (let index = options.skip ?? 0; index < lines.length; index += 1) {
        const line = lines[index];
        if (line === undefined) continue;
        const chunk = this.#batcher.add(line, cursorAfter(index + 1));
        if (chunk !== undefined) {
          this.#disarm();
          if (!(await this.#emit(chunk))) return;
        }
        this.#arm();
      }
      if (options.flush === true) await this.#flushHeld();
    });
  }

  /** Emits the chunk held so far, if any. Resolves `false` when the source stopped. */
  flush(): Promise<boolean> {
    return this.#exclusive(() => this.#flushHeld());
  }

  /**
   * Emits a notice, a `failed`, `exhausted` or `rotated` emission, after the chunk held so far
   * (lines read before the event come before it in the log). Resolves `false` when stopped.
   */
  report(emission: Exclude<SourceEmission, { type: "chunk" }>): Promise<boolean> {
    return this.#exclusive(async () => {
      if (await this.#flushHeld()) await this.#emit(emission);
    });
  }

  /** Clears the timer; call when the source's run ends. */
  close(): void {
    this.#disarm();
  }

  async #flushHeld(): Promise<boolean> {
    this.#disarm();
    const chunk = this.#batcher.flush();
    return chunk === undefined ? true : this.#emit(chunk);
  }

  /**
   * Emits and waits for the runner, or only until the signal aborts: a source stopped while its
   * runner still holds an emission returns at once (nothing after it is emitted either way).
   */
  async #emit(emission: SourceEmission): Promise<boolean> {
    if (this.stopped) return false;
    const { signal } = this.#context;
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const emitted = Promise.resolve().then(() => this.#context.emit(emission));
      emitted.catch(() => undefined);
      await Promise.race([emitted, aborted]);
      return !this.stopped;
    } catch {
      this.#stopped = true;
      return false;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  #exclusive(work: () => Promise<unknown>): Promise<boolean> {
    this.#pending += 1;
    const run = this.#chain.then(async () => {
      if (!this.stopped) await work();
    });
    const settle = () => {
      this.#pending -= 1;
    };
    this.#chain = run.then(settle, settle);
    return run.then(() => !this.stopped);
  }

  #arm(): void {
    if (!this.#batcher.holding || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((error: unknown) => {
        this.#fault = error;
        this.#stopped = true;
      });
    }, this.#maxWaitMs);
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
