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
  /** Pending groups are `#groups[#head…]`: taking from the front must not shift the array. */
  #groups: (QueuedGroup | undefined)[] = [];
  #head = 0;
  /** Pending groups holding a critical event: they make the next write urgent. */
  #critical = 0;
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

  /** Queues one validated event; resolves with it as stored (or with what it coalesced into). */
  enqueueOne(event: PreparedEvent): Promise<SpoolEvent> {
    const droppable = event.criticality === "droppable";
    if (droppable) {
      const merged = this.#coalesce(event);
      if (merged !== undefined) return merged;
    }
    return new Promise((resolve, reject) => {
      const group: QueuedGroup = {
        events: [{ event, settle: [{ resolve, reject }] }],
        critical: !droppable,
        open: droppable && eventSpec(event.type)?.coalesce !== undefined,
      };
      this.#push(group);
    });
  }

  /** Queues validated events as one atomic group; resolves with them as stored. */
  enqueue(events: readonly PreparedEvent[]): Promise<SpoolEvent[]> {
    const group: QueuedGroup = { events: [], critical: false, open: false };
    const done = events.map((event) => {
      const queued: QueuedEvent = { event, settle: [] };
      group.events.push(queued);
      if (event.criticality === "critical") group.critical = true;
      return new Promise<SpoolEvent>((resolve, reject) => queued.settle.push({ resolve, reject }));
    });
    this.#push(group);
    return Promise.all(done);
  }

  #push(group: QueuedGroup): void {
    this.#groups.push(group);
    if (group.critical) this.#critical += 1;
    this.#queued += group.events.length;
    this.#schedule(group.critical || this.#queued >= this.#options.maxBatch);
  }

  /** Writes everything queued, droppable events included, and waits for it. */
  async drain(): Promise<void> {
    while (this.#pending > 0 || this.#writing !== undefined) {
      if (this.#writing !== undefined) await this.#writing;
      else this.#startWriting();
    }
  }

  #coalesce(event: PreparedEvent): Promise<SpoolEvent> | undefined {
    const last = this.#pending > 0 ? this.#groups.at(-1) : undefined;
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
    if (this.#writing !== undefined || this.#pending === 0) return;
    this.#writing = this.#writeLoop().finally(() => {
      this.#writing = undefined;
      if (this.#pending > 0) this.#schedule(this.#critical > 0);
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
      taken = this.#critical > 0 || this.#queued >= this.#options.maxBatch ? this.#take() : [];
    }
  }

  get #pending(): number {
    return this.#groups.length - this.#head;
  }

  #take(): QueuedEvent[] {
    const taken: QueuedEvent[] = [];
    while (this.#pending > 0) {
      const group = this.#groups[this.#head]!;
      if (taken.length > 0 && taken.length + group.events.length > this.#options.maxBatch) break;
      this.#groups[this.#head] = undefined;
      this.#head += 1;
      if (group.critical) this.#critical -= 1;
      group.open = false;
      for (const queued of group.events) taken.push(queued);
    }
    if (this.#head > 1024 && this.#head * 2 > this.#groups.length) {
      this.#groups = this.#groups.slice(this.#head);
      this.#head = 0;
    }
    this.#queued -= taken.length;
    return taken;
  }
}

function toPending(event: PreparedEvent): PendingEvent {
  const dataJson = canonicalJson(event.data);
  return { event, dataJson, canonical: canonicalEvent(event, dataJson) };
}
