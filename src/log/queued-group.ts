import type { PreparedEvent, SpoolEvent } from "../spec/index.js";
import type { LeaseFence } from "./lease.js";
import type { SeqPrediction } from "./seq-prediction.js";

/** Who waits for an append: `T` is one stored event, or a batch's stored events. */
export interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * Events appended together; written in one transaction, never split. A batch has one waiter for
 * all its events; a single append has its own, and one more per append coalesced into its event.
 */
export interface QueuedGroup {
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
  /** The prediction the group was appended with: written only while it holds (see `predict`). */
  predicted?: SeqPrediction;
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

/** Rejects every waiter of `group` with `error`. */
export function reject(group: QueuedGroup, error: unknown): void {
  group.batch?.reject(error);
  group.single?.reject(error);
  for (const waiter of group.coalesced ?? []) waiter.reject(error);
}

/** Resolves every waiter of `groups` with its events out of `stored`, the write's result in order. */
export function settle(groups: readonly QueuedGroup[], stored: readonly SpoolEvent[]): void {
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
export function fenceKeyOf(fences: readonly LeaseFence[]): string {
  if (fences.length === 1) return `${fences[0]!.token} ${fences[0]!.continuity}`;
  return fences
    .map((fence) => `${fence.token} ${fence.continuity}`)
    .sort()
    .join("\n");
}
