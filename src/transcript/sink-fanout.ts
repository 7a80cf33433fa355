import type { StreamPart } from "../providers/index.js";
import { describeSinkError, type SinkReport, type StreamSink } from "./sink.js";

/** Options of `createSinkFanout`. */
export interface SinkFanoutOptions {
  sinks: readonly StreamSink[];
  /** A sink with more parts than this queued is reported lagging (default 10,000). */
  lagLimitParts?: number;
  /** Called for every report as it happens. Must not throw (what it throws is ignored). */
  onReport(report: SinkReport): void;
  /** Milliseconds clock for `lagMs` (default `performance.now`). */
  now?: () => number;
}

/** Hands every part to every sink; see `createSinkFanout`. */
export interface SinkFanout {
  /**
   * Queues `part` for every healthy sink and returns at once; never throws, never waits. Parts
   * pushed after `close()` are ignored.
   */
  push(part: StreamPart): void;
  /**
   * Waits for every sink's queue to drain, then closes every sink (in parallel), and resolves with
   * every report made; a failed sink's report carries its final count of dropped parts. Never
   * rejects. A sink whose `write` never settles holds `close()` until it does.
   */
  close(): Promise<SinkReport[]>;
}

/**
 * Fans a model's stream out to sinks, each with its own FIFO queue drained by its own loop, so a
 * slow sink delays only itself and a failing one fails only itself.
 *
 * - A healthy sink gets every part, in order; parts are never dropped for it, however far behind
 *   it falls (a queue longer than `lagLimitParts` is reported `lagging` once per crossing, and
 *   again only after it has drained below half the limit).
 * - A sink whose `write` or `close` throws or rejects is reported `failed` once; the parts still
 *   queued for it and every later part are counted as dropped.
 * - A sink whose `write` returns nothing is called synchronously inside `push` when its queue is
 *   empty, so synchronous sinks cost no promise per part.
 */
export function createSinkFanout(options: SinkFanoutOptions): SinkFanout {
  const lagLimit = options.lagLimitParts ?? 10_000;
  const now = options.now ?? (() => performance.now());
  const reports: SinkReport[] = [];
  const report = (entry: SinkReport) => {
    reports.push(entry);
    try {
      options.onReport({ ...entry });
    } catch {
      // A reporter's own failure must not reach the stream.
    }
  };
  const lanes = options.sinks.map((sink) => new Lane(sink, lagLimit, now, report));
  let closing: Promise<SinkReport[]> | undefined;
  return {
    push(part) {
      if (closing !== undefined) return;
      for (const lane of lanes) lane.push(part);
    },
    close() {
      closing ??= (async () => {
        await Promise.all(lanes.map((lane) => lane.drained()));
        await Promise.all(lanes.map((lane) => lane.close()));
        return reports.map((entry) => ({ ...entry }));
      })();
      return closing;
    },
  };
}

/** One sink's queue and the loop that drains it. */
class Lane {
  readonly #sink: StreamSink;
  readonly #lagLimit: number;
  readonly #now: () => number;
  readonly #report: (report: SinkReport) => void;
  /** Queued parts are `#queue[#head…]`. */
  #queue: (StreamPart | undefined)[] = [];
  #head = 0;
  #running: Promise<void> | undefined;
  #failure: Extract<SinkReport, { kind: "failed" }> | undefined;
  #lagging = false;
  #backlogSince = 0;

  constructor(
    sink: StreamSink,
    lagLimit: number,
    now: () => number,
    report: (report: SinkReport) => void,
  ) {
    this.#sink = sink;
    this.#lagLimit = lagLimit;
    this.#now = now;
    this.#report = report;
  }

  push(part: StreamPart): void {
    if (this.#failure) {
      this.#failure.droppedParts += 1;
      return;
    }
    if (this.#running === undefined) {
      // Idle: deliver now; only a returned promise makes this lane asynchronous.
      this.#deliver(part);
      return;
    }
    if (this.#queue.length === this.#head) this.#backlogSince = this.#now();
    this.#queue.push(part);
    const queued = this.#queue.length - this.#head;
    if (!this.#lagging && queued > this.#lagLimit) {
      this.#lagging = true;
      this.#report({
        kind: "lagging",
        sink: this.#sink.name,
        queuedParts: queued,
        lagMs: Math.max(0, this.#now() - this.#backlogSince),
      });
    }
  }

  /** Resolves once every queued part has been written (or dropped). */
  async drained(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  async close(): Promise<void> {
    if (!this.#sink.close) return;
    try {
      await this.#sink.close();
    } catch (error) {
      this.#fail(error, "sink.close-failed");
    }
  }

  #deliver(part: StreamPart): void {
    let result: void | Promise<void>;
    try {
      result = this.#sink.write(part);
    } catch (error) {
      this.#fail(error, "sink.write-failed");
      return;
    }
    if (result !== undefined && typeof (result as Promise<void>).then === "function") {
      this.#running = this.#drain(result);
    }
  }

  async #drain(first: Promise<void>): Promise<void> {
    try {
      await first;
      while (!this.#failure && this.#head < this.#queue.length) {
        const part = this.#queue[this.#head]!;
        this.#queue[this.#head] = undefined;
        this.#head += 1;
        if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
          this.#queue = this.#queue.slice(this.#head);
          this.#head = 0;
        }
        if (this.#lagging && this.#queue.length - this.#head <= this.#lagLimit / 2)
          this.#lagging = false;
        const result = this.#sink.write(part);
        if (result !== undefined) await result;
      }
    } catch (error) {
      this.#fail(error, "sink.write-failed");
    } finally {
      this.#queue = [];
      this.#head = 0;
      this.#lagging = false;
      this.#running = undefined;
    }
  }

  #fail(error: unknown, fallbackCode: string): void {
    if (this.#failure) return;
    const { code, message } = describeSinkError(error, fallbackCode);
    this.#failure = {
      kind: "failed",
      sink: this.#sink.name,
      code,
      message,
      droppedParts: this.#queue.length - this.#head,
    };
    this.#queue = [];
    this.#head = 0;
    this.#report(this.#failure);
  }
}
