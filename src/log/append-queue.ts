import { eventSpec, type PreparedEvent, type SpoolEvent } from "../spec/index.js";
import type { AppendBatchOptions } from "./event-store.js";
import type { LeaseFence } from "./lease.js";
import type { WriteOptions } from "./log-backend.js";
import { fenceKeyOf, type QueuedGroup, reject, settle } from "./queued-group.js";
import {
  isSeqMoved,
  type PredictedEvent,
  type SeqPrediction,
  seqMovedError,
} from "./seq-prediction.js";

/** Writes one transaction: the events, the lease tokens it must be fenced by, and how. */
export type WriteBatch = (
  batch: readonly PreparedEvent[],
  fences: readonly LeaseFence[] | undefined,
  options: WriteOptions | undefined,
) => Promise<SpoolEvent[]>;

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
  /** A write with a seq check is in flight: nothing is written beside it (see `#ended`). */
  #checking = false;
  /** Events handed to writes that did not fail: each took (or is taking) a seq. */
  #handed = 0;
  /** The groups of the writes in flight, in write order. */
  #flying: QueuedGroup[] = [];
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
   * With `predicted` (from `predict`), the group is written only if every group pending then got
   * the seq predicted for it; otherwise it fails with `store.seq-moved` and nothing of it is written.
   * `unhurried` writes an intent with the turn's critical appends (nothing waits for it).
   */
  enqueue(
    events: readonly PreparedEvent[],
    fences?: readonly LeaseFence[],
    { after, predicted, unhurried }: AppendBatchOptions = {},
  ): Promise<SpoolEvent[]> {
    const critical = events.some((event) => event.criticality === "critical");
    const fenced = fences && fences.length > 0 ? { fences, fenceKey: fenceKeyOf(fences) } : {};
    const before = (after ?? [])
      .map((promise) => this.#groupOf.get(promise))
      .filter((group): group is QueuedGroup => group !== undefined && group.state !== "written");
    const group: QueuedGroup = {
      events: [...events],
      critical,
      intent:
        critical && !unhurried && events.some((event) => eventSpec(event.type)?.intent === true),
      state: "queued",
      open: false,
      ...fenced,
      ...(before.length > 0 ? { after: before } : {}),
      ...(predicted ? { predicted } : {}),
    };
    const promise = new Promise<SpoolEvent[]>((resolve, reject) => {
      group.batch = { resolve, reject };
    });
    this.#groupOf.set(promise, group);
    this.#push(group);
    return promise;
  }

  /**
   * The seqs the appends in flight and pending will get, in order from `known` + 1 (the last seq
   * this store's answered writes took), if nothing else is written first: each event with its
   * seq, and the prediction to append with (`enqueue`'s `predicted`), which is checked when that
   * append is written. No later append merges into a predicted event.
   */
  predict(known: number): { prediction: SeqPrediction; events: PredictedEvent[] } {
    const groups: QueuedGroup[] = [];
    const events: PredictedEvent[] = [];
    let seq = known + 1;
    let flying = 0;
    for (const group of this.#flying) {
      groups.push(group);
      flying += group.events.length;
      for (const event of group.events) events.push({ event, seq: seq++ });
    }
    for (let i = this.#head; i < this.#groups.length; i++) {
      const group = this.#groups[i]!;
      group.open = false;
      groups.push(group);
      for (const event of group.events) events.push({ event, seq: seq++ });
    }
    return { prediction: { groups, base: known + 1, handed: this.#handed - flying }, events };
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
      if (started > 0) continue;
      // Nothing started and nothing in flight: what was pending failed without a write (it
      // followed an append that failed, or a prediction that did not hold). Look again.
      if (this.#inFlight === 0) continue;
      // The next group waits for a write in flight: wait for one to end.
      await new Promise<void>((resolve) => this.#writeEnded.push(resolve));
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
    while (
      this.#pending > 0 &&
      this.#inFlight < this.#maxInFlight &&
      !this.#checking &&
      (first || this.#urgent)
    ) {
      first = false;
      const { taken, expectFirst } = this.#take();
      // The next group waits for a write in flight (see `enqueue`'s `after`): its end goes on.
      if (taken.length === 0) break;
      started += 1;
      const batch = taken.length === 1 ? taken[0]!.events : taken.flatMap((group) => group.events);
      this.#inFlight += 1;
      this.#handed += batch.length;
      for (const group of taken) this.#flying.push(group);
      this.#checking = expectFirst !== undefined;
      let written: Promise<SpoolEvent[]>;
      try {
        written = this.#write(
          batch,
          taken[0]!.fences,
          expectFirst === undefined ? undefined : { expectFirst },
        );
      } catch (error) {
        written = Promise.reject(error);
      }
      written.then(
        (stored) => this.#ended(taken, stored),
        (error) => this.#ended(taken, undefined, error, expectFirst !== undefined),
      );
    }
    return started;
  }

  #ended(
    groups: readonly QueuedGroup[],
    stored: SpoolEvent[] | undefined,
    error?: unknown,
    checked = false,
  ): void {
    this.#inFlight -= 1;
    this.#checking = false;
    // Writes end in the order they were handed: theirs are the first groups in flight.
    this.#flying.splice(0, groups.length);
    if (!stored) this.#handed -= groups.reduce((sum, group) => sum + group.events.length, 0);
    if (checked && isSeqMoved(error)) {
      this.#requeue(groups, error);
      this.#goOn();
      return;
    }
    for (const group of groups) {
      group.state = stored ? "written" : "failed";
      if (!stored) group.error = error;
      group.after = undefined;
    }
    if (stored) settle(groups, stored);
    else for (const group of groups) reject(group, error);
    this.#goOn();
  }

  /** After a write: wakes whoever waits for one, and writes on. */
  #goOn(): void {
    for (const wake of this.#writeEnded.splice(0)) wake();
    if (this.#pending === 0) return;
    // Whatever is urgent goes on at once; lone droppables get their timer again.
    if (this.#urgent) this.#startWriting();
    else this.#schedule(false);
  }

  /**
   * A write refused because a seq prediction no longer held: the predicting group in it fails;
   * the others go back to the front of the queue, in order, to be written without it. (No other
   * write starts while a checked one is in flight.)
   */
  #requeue(groups: readonly QueuedGroup[], error: unknown): void {
    const failed = groups.filter((group) => group.predicted !== undefined);
    const back = groups.filter((group) => group.predicted === undefined);
    for (const group of back) {
      group.state = "queued";
      if (group.critical) this.#critical += 1;
      this.#queued += group.events.length;
    }
    this.#groups.splice(this.#head, 0, ...back);
    for (const group of failed) {
      group.state = "failed";
      group.error = error;
      group.predicted = undefined;
      reject(group, error);
    }
  }

  get #pending(): number {
    return this.#groups.length - this.#head;
  }

  /**
   * The groups of the next transaction: whole groups of one fence key, up to `maxBatch` events
   * unless one is larger, and the seq its first event must get when a group in it was appended
   * with a prediction (the write then ends with that group).
   */
  #take(): { taken: QueuedGroup[]; expectFirst: number | undefined } {
    const taken: QueuedGroup[] = [];
    let events = 0;
    let expectFirst: number | undefined;
    while (this.#pending > 0) {
      const group = this.#groups[this.#head]!;
      const waits = group.after ? this.#waitsFor(group, taken) : "no";
      if (waits === "no" && group.predicted) {
        // A write with a check goes alone after what it follows: a refusal then fails only it.
        if (taken.some((other) => other.predicted)) break;
        const failed = group.predicted.groups.some(
          (predicted) => (predicted as QueuedGroup).state === "failed",
        );
        if (failed) {
          this.#drop(group, seqMovedError("an append it was predicted after failed"));
          continue;
        }
        expectFirst = group.predicted.base + (this.#handed - group.predicted.handed);
      }
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
      if (group.predicted) break;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#groups.length) {
      this.#groups = this.#groups.slice(this.#head);
      this.#head = 0;
    }
    return { taken, expectFirst };
  }

  /** Fails a group taken from the queue's front without writing it. */
  #drop(group: QueuedGroup, error: unknown): void {
    this.#groups[this.#head] = undefined;
    this.#head += 1;
    if (group.critical) this.#critical -= 1;
    this.#queued -= group.events.length;
    group.state = "failed";
    group.error = error;
    group.after = undefined;
    group.predicted = undefined;
    reject(group, error);
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
