import {
  canonicalEvent,
  canonicalJson,
  eventSpec,
  type PreparedEvent,
  type SpoolEvent,
} from "../spec/index.js";
import type { PendingEvent } from "./log-backend.js";

/** One event waiting to be written, and everyone waiting for it. */
interface QueuedEvent {
  /** Canonical form is computed when the event is taken for writing, after any coalescing. */
  event: PreparedEvent;
  settle: Array<{ resolve: (event: SpoolEvent) => void; reject: (error: unknown) => void }>;
}

/** Events appended together; written in one transaction, never split. */
interface QueuedGroup {
  events: QueuedEvent[];
  critical: boolean;
  /** A lone droppable event that later droppable appends may merge into. */
  open: boolean;
}

/** Tuning of group commit. */
export interface AppendQueueOptions {
  /** How long droppable events may wait for company before being written (default 50 ms). */
  droppableDelayMs: number;
  /** Most events written in one transaction; a larger atomic batch is still written whole (default 5,000). */
  maxBatch: number;
}

/**
 * Group commit with coalescing. Appends made while a transaction is in flight, or in the same
 * tick, share the next transaction. Critical events are written as soon as possible; droppable
 * ones wait up to `droppableDelayMs` unless a critical event behind them pulls them along.
 * Order of writes is exactly the order of `enqueue` calls.
 */
export class AppendQueue {
  readonly #write: (batch: readonly PendingEvent[]) => Promise<SpoolEvent[]>;
  readonly #options: AppendQueueOptions;
  #groups: QueuedGroup[] = [];
  #queued = 0;
  #writing: Promise<void> | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    write: (batch: readonly PendingEvent[]) => Promise<SpoolEvent[]>,
    options: AppendQueueOptions,
  ) {
    this.#write = write;
    this.#options = options;
  }

  /** Queues validated events as one atomic group; resolves with them as stored. */
  enqueue(events: readonly PreparedEvent[]): Promise<SpoolEvent[]> {
    const single = events.length === 1 ? events[0] : undefined;
    if (single && single.criticality === "droppable") {
      const merged = this.#coalesce(single);
      if (merged !== undefined) return merged.then((event) => [event]);
    }
    const group: QueuedGroup = { events: [], critical: false, open: false };
    const done = events.map((event) => {
      const queued: QueuedEvent = { event, settle: [] };
      group.events.push(queued);
      if (event.criticality === "critical") group.critical = true;
      return new Promise<SpoolEvent>((resolve, reject) => queued.settle.push({ resolve, reject }));
    });
    group.open =
      single?.criticality === "droppable" && eventSpec(single.type)?.coalesce !== undefined;
    this.#groups.push(group);
    this.#queued += events.length;
    this.#schedule(group.critical || this.#queued >= this.#options.maxBatch);
    return Promise.all(done);
  }

  /** Writes everything queued, droppable events included, and waits for it. */
  async drain(): Promise<void> {
    while (this.#groups.length > 0 || this.#writing !== undefined) {
      if (this.#writing !== undefined) await this.#writing;
      else this.#startWriting();
    }
  }

  get idle(): boolean {
    return this.#groups.length === 0 && this.#writing === undefined;
  }

  #coalesce(event: PreparedEvent): Promise<SpoolEvent> | undefined {
    const last = this.#groups.at(-1);
    const target = last?.open ? last.events[0] : undefined;
    if (!target) return undefined;
    const previous = target.event;
    if (
      previous.type !== event.type ||
      previous.continuity !== event.continuity ||
      previous.stream.kind !== event.stream.kind ||
      previous.stream.id !== event.stream.id ||
      previous.actor !== event.actor ||
      previous.origin !== event.origin
    ) {
      return undefined;
    }
    const data = eventSpec(event.type)?.coalesce?.(previous.data, event.data);
    if (data === undefined) return undefined;
    target.event = { ...previous, data };
    return new Promise((resolve, reject) => target.settle.push({ resolve, reject }));
  }

  #schedule(urgent: boolean): void {
    if (this.#writing !== undefined) return; // the loop picks it up when the current write ends
    if (urgent) {
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#immediate ??= setImmediate(() => {
        this.#immediate = undefined;
        this.#startWriting();
      });
    } else {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        this.#startWriting();
      }, this.#options.droppableDelayMs);
    }
  }

  #startWriting(): void {
    if (this.#writing !== undefined || this.#groups.length === 0) return;
    this.#writing = this.#writeLoop().finally(() => {
      this.#writing = undefined;
      if (this.#groups.length > 0) this.#schedule(this.#groups.some((group) => group.critical));
    });
  }

  async #writeLoop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    let taken = this.#take();
    while (taken.length > 0) {
      const batch = taken.map((queued) => toPending(queued.event));
      try {
        const stored = await this.#write(batch);
        taken.forEach((queued, index) => {
          for (const { resolve } of queued.settle) resolve(stored[index]!);
        });
      } catch (error) {
        for (const queued of taken) for (const { reject } of queued.settle) reject(error);
      }
      // Keep going only while something urgent waits; lone droppables wait for their timer.
      taken =
        this.#groups.some((group) => group.critical) || this.#queued >= this.#options.maxBatch
          ? this.#take()
          : [];
    }
  }

  #take(): QueuedEvent[] {
    const taken: QueuedEvent[] = [];
    while (this.#groups.length > 0) {
      const group = this.#groups[0]!;
      if (taken.length > 0 && taken.length + group.events.length > this.#options.maxBatch) break;
      this.#groups.shift();
      group.open = false;
      taken.push(...group.events);
    }
    this.#queued -= taken.length;
    return taken;
  }
}

function toPending(event: PreparedEvent): PendingEvent {
  const dataJson = canonicalJson(event.data);
  return { event, dataJson, canonical: canonicalEvent(event, dataJson) };
}
