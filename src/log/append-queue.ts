import { eventSpec, type PreparedEvent, type SpoolEvent } from "../spec/index.js";
import type { LeaseFence } from "./lease.js";

/** Writes one transaction: the events, and the lease tokens it must be fenced by. */
export type WriteBatch = (
  batch: readonly PreparedEvent[],
  fences: readonly LeaseFence[] | undefined,
) => Promise<SpoolEvent[]>;

/** Who waits for an append: `T` is one stored event, or a batch's stored events. */
interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * Events appended together; written in one transaction, never split. A batch has one waiter for
 * all its events; a single append has its own, and one more per append coalesced into its event.
 */
interface QueuedGroup {
  /** Canonical forms are computed by the backend as it writes, after any coalescing. */
  events: PreparedEvent[];
  critical: boolean;
  /** Holds an intent (see `EventSpec.intent`): its write starts at the next microtask. */
  intent: boolean;
  /** Where the group is: waiting, in a write, or written (or not). */
  state: "queued" | "writing" | "written" | "failed";
  /** Why its write failed. */
  error?: unknown;
  /** Groups that must be written before this one or in its transaction (see `enqueue`). */
  after?: readonly QueuedGroup[];
  /** A lone droppable event that later droppable appends may merge into. */
  open: boolean;
  /**
   * The lease tokens the group's transaction must be fenced by, and a key naming them: groups
   * share a transaction only with groups of the same key, so a refused token fails no append
   * it did not fence.
   */
  fences?: readonly LeaseFence[];
  fenceKey?: string;
  batch?: Waiter<SpoolEvent[]>;
  single?: Waiter<SpoolEvent>;
  coalesced?: Array<Waiter<SpoolEvent>>;
}

/** Tuning of group commit. */
export interface AppendQueueOptions {
  /** How long droppable events may wait for company before being written (default 50 ms). */
  droppableDelayMs: number;
  /** Most events written in one transaction; a larger atomic batch is still written whole (default 5,000). */
  maxBatch: number;
  /**
   * Most writes in flight at once (default 1). With more, the next batch is handed over while the
   * last is still being stored; `write` must then store and settle them in call order.
   */
  maxInFlight?: number;
}

/**
 * Group commit with coalescing. Appends made while a transaction is in flight, or in the same
 * tick, share the next transaction. Critical events are written as soon as possible; droppable
 * ones wait up to `droppableDelayMs` unless a critical event behind them pulls them along.
 * Order of writes is exactly the order of `enqueue` calls.
 */
export class AppendQueue {
  readonly #write: WriteBatch;
  readonly #options: AppendQueueOptions;
  /** Pending groups are `#groups[#head…]`: taking from the front must not shift the array. */
  #groups: (QueuedGroup | undefined)[] = [];
  #head = 0;
  /** Pending groups holding a critical event: they make the next write urgent. */
  #critical = 0;
  #queued = 0;
  #inFlight = 0;
  /** Woken whenever a write ends. */
  #writeEnded: Array<() => void> = [];
  #immediate: NodeJS.Immediate | undefined;
  /** A microtask is queued to start writing (an intent waits). */
  #soon = false;
  /** The group behind each promise this queue returned, for `enqueue`'s `after`. */
  readonly #groupOf = new WeakMap<Promise<unknown>, QueuedGroup>();
  #timer: NodeJS.Timeout | undefined;

  constructor(write: WriteBatch, options: AppendQueueOptions) {
    this.#write = write;
    this.#options = options;
  }

  /**
   * Queues one validated event, fenced by `fence` when given; resolves with it as stored (or with
   * what it coalesced into).
   */
  enqueueOne(event: PreparedEvent, fence?: LeaseFence): Promise<SpoolEvent> {
    const droppable = event.criticality === "droppable";
    const fenceKey = fence ? fenceKeyOf([fence]) : undefined;
    if (droppable) {
      const merged = this.#coalesce(event, fenceKey);
      if (merged !== undefined) return merged;
    }
    const spec = eventSpec(event.type);
    const group: QueuedGroup = {
      events: [event],
      critical: !droppable,
      intent: !droppable && spec?.intent === true,
      state: "queued",
      open: droppable && spec?.coalesce !== undefined,
      ...(fence ? { fences: [fence], fenceKey } : {}),
    };
    const promise = new Promise<SpoolEvent>((resolve, reject) => {
      group.single = { resolve, reject };
    });
    this.#groupOf.set(promise, group);
    this.#push(group);
    return promise;
  }

  /**
   * Queues validated events as one atomic group, fenced by `fences`; resolves with them as stored.
   * With `after` (promises this queue returned for earlier appends), the group is written only
   * once each of those is written, before it or in its transaction; when one of them failed, the
   * group fails too and nothing of it is written. A promise this queue did not return is ignored.
   */
  enqueue(
    events: readonly PreparedEvent[],
    fences?: readonly LeaseFence[],
    after?: readonly Promise<unknown>[],
  ): Promise<SpoolEvent[]> {
    const critical = events.some((event) => event.criticality === "critical");
    const fenced = fences && fences.length > 0 ? { fences, fenceKey: fenceKeyOf(fences) } : {};
    const before = (after ?? [])
      .map((promise) => this.#groupOf.get(promise))
      .filter((group): group is QueuedGroup => group !== undefined && group.state !== "written");
    const group: QueuedGroup = {
      events: [...events],
      critical,
      intent: critical && events.some((event) => eventSpec(event.type)?.intent === true),
      state: "queued",
      open: false,
      ...fenced,
      ...(before.length > 0 ? { after: before } : {}),
    };
    const promise = new Promise<SpoolEvent[]>((resolve, reject) => {
      group.batch = { resolve, reject };
    });
    this.#groupOf.set(promise, group);
    this.#push(group);
    return promise;
  }

  #push(group: QueuedGroup): void {
    this.#groups.push(group);
    if (group.critical) this.#critical += 1;
    this.#queued += group.events.length;
    if (group.intent) this.#scheduleSoon();
    else this.#schedule(group.critical || this.#queued >= this.#options.maxBatch);
  }

  /**
   * Starts writing at the next microtask, once the code that appended has run to its next wait
   * (so appends made together still share the transaction), not after the event loop's turn.
   */
  #scheduleSoon(): void {
    if (this.#inFlight >= this.#maxInFlight || this.#soon) return;
    this.#soon = true;
    queueMicrotask(() => {
      this.#soon = false;
      if (this.#pending > 0 && this.#inFlight < this.#maxInFlight) this.#startWriting();
    });
  }

  /** Writes everything queued, droppable events included, and waits for it. */
  async drain(): Promise<void> {
    while (this.#pending > 0 || this.#inFlight > 0) {
      const started =
        this.#pending > 0 && this.#inFlight < this.#maxInFlight ? this.#startWriting() : 0;
      // Nothing to start (the next group waits for a write in flight): wait for one to end.
      if (started === 0) await new Promise<void>((resolve) => this.#writeEnded.push(resolve));
    }
  }

  get #maxInFlight(): number {
    return this.#options.maxInFlight ?? 1;
  }

  get #urgent(): boolean {
    return this.#critical > 0 || this.#queued >= this.#options.maxBatch;
  }

  #coalesce(event: PreparedEvent, fenceKey: string | undefined): Promise<SpoolEvent> | undefined {
    const last = this.#pending > 0 ? this.#groups.at(-1) : undefined;
    if (!last?.open || last.fenceKey !== fenceKey) return undefined;
    const previous = last.events[0]!;
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
    last.events[0] = { ...previous, data };
    const promise = new Promise<SpoolEvent>((resolve, reject) => {
      last.coalesced ??= [];
      last.coalesced.push({ resolve, reject });
    });
    this.#groupOf.set(promise, last);
    return promise;
  }

  #schedule(urgent: boolean): void {
    if (this.#inFlight >= this.#maxInFlight) return; // picked up when a write ends
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

  /**
   * Hands the pending groups to `write`, a transaction at a time, while fewer than `maxInFlight`
   * writes are in flight. After the first it goes on only while something urgent waits: lone
   * droppable events wait for their timer.
   */
  #startWriting(): number {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    let first = true;
    let started = 0;
    while (this.#pending > 0 && this.#inFlight < this.#maxInFlight && (first || this.#urgent)) {
      first = false;
      const taken = this.#take();
      // The next group waits for a write in flight (see `enqueue`'s `after`): its end goes on.
      if (taken.length === 0) break;
      started += 1;
      const batch = taken.length === 1 ? taken[0]!.events : taken.flatMap((group) => group.events);
      this.#inFlight += 1;
      let written: Promise<SpoolEvent[]>;
      try {
        written = this.#write(batch, taken[0]!.fences);
      } catch (error) {
        written = Promise.reject(error);
      }
      written.then(
        (stored) => this.#ended(taken, stored),
        (error) => this.#ended(taken, undefined, error),
      );
    }
    return started;
  }

  #ended(groups: readonly QueuedGroup[], stored: SpoolEvent[] | undefined, error?: unknown): void {
    this.#inFlight -= 1;
    for (const group of groups) {
      group.state = stored ? "written" : "failed";
      if (!stored) group.error = error;
      group.after = undefined;
    }
    if (stored) settle(groups, stored);
    else for (const group of groups) reject(group, error);
    for (const wake of this.#writeEnded.splice(0)) wake();
    if (this.#pending === 0) return;
    // Whatever is urgent goes on at once; lone droppables get their timer again.
    if (this.#urgent) this.#startWriting();
    else this.#schedule(false);
  }

  get #pending(): number {
    return this.#groups.length - this.#head;
  }

  /**
   * The groups of the next transaction: whole groups of one fence key, up to `maxBatch` events
   * unless one is larger.
   */
  #take(): QueuedGroup[] {
    const taken: QueuedGroup[] = [];
    let events = 0;
    while (this.#pending > 0) {
      const group = this.#groups[this.#head]!;
      const waits = group.after ? this.#waitsFor(group, taken) : "no";
      if (waits === "write") break;
      if (waits === "no") {
        if (events > 0 && events + group.events.length > this.#options.maxBatch) break;
        if (events > 0 && group.fenceKey !== taken[0]!.fenceKey) break;
      }
      this.#groups[this.#head] = undefined;
      this.#head += 1;
      if (group.critical) this.#critical -= 1;
      group.open = false;
      this.#queued -= group.events.length;
      if (waits === "failed") {
        // Written without what it must follow, it would stand in the log for what never was.
        const failed = group.after!.find((before) => before.state === "failed")!;
        group.state = "failed";
        group.error = failed.error;
        group.after = undefined;
        reject(group, failed.error);
        continue;
      }
      group.state = "writing";
      taken.push(group);
      events += group.events.length;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#groups.length) {
      this.#groups = this.#groups.slice(this.#head);
      this.#head = 0;
    }
    return taken;
  }

  /**
   * Whether `group` must wait for the groups it follows: `no` when each is written or in `taken`
   * (this transaction), `write` while one is in another write, `failed` when one failed.
   */
  #waitsFor(group: QueuedGroup, taken: readonly QueuedGroup[]): "no" | "write" | "failed" {
    let waits: "no" | "write" = "no";
    for (const before of group.after!) {
      if (before.state === "failed") return "failed";
      if (before.state === "writing" && !taken.includes(before)) waits = "write";
    }
    return waits;
  }
}

/** Rejects every waiter of `group` with `error`. */
function reject(group: QueuedGroup, error: unknown): void {
  group.batch?.reject(error);
  group.single?.reject(error);
  for (const waiter of group.coalesced ?? []) waiter.reject(error);
}

/** Resolves every waiter of `groups` with its events out of `stored`, the write's result in order. */
function settle(groups: readonly QueuedGroup[], stored: readonly SpoolEvent[]): void {
  let offset = 0;
  for (const group of groups) {
    const count = group.events.length;
    if (group.batch)
      group.batch.resolve(
        count === stored.length ? (stored as SpoolEvent[]) : stored.slice(offset, offset + count),
      );
    if (group.single) {
      const event = stored[offset]!;
      group.single.resolve(event);
      for (const waiter of group.coalesced ?? []) waiter.resolve(event);
    }
    offset += count;
  }
}

/** A key naming a set of fences: equal keys, equal fences. */
function fenceKeyOf(fences: readonly LeaseFence[]): string {
  if (fences.length === 1) return `${fences[0]!.token} ${fences[0]!.continuity}`;
  return fences
    .map((fence) => `${fence.token} ${fence.continuity}`)
    .sort()
    .join("\n");
}
