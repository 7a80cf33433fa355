import type { PinnedItem, RecalledItem, StreamPosition, SummaryItem } from "../continuity/index.js";
import type { StepRecord } from "./step-results.js";
import type { HistoryMessage, ThreadCursor } from "./thread-history.js";

/** A thread history's state as `ThreadHistory.snapshot` took it (opaque). */
export interface HistorySnapshot {
  readonly messages: readonly HistoryMessage[];
  readonly steps: ReadonlyArray<readonly [number, StepRecord]>;
  readonly maps: ReadonlyArray<ReadonlyMap<string, unknown>>;
  readonly variables: ReadonlyMap<string, unknown>;
  readonly pinned: ReadonlyMap<string, PinnedItem>;
  readonly summaries: readonly SummaryItem[];
  readonly scalars: {
    streams: readonly StreamPosition[] | undefined;
    memories: readonly RecalledItem[];
    newestTurn: number;
    lastSeq: number;
    cursor: ThreadCursor | null;
  };
  readonly pages: readonly number[];
}

/** Empties `map` and fills it with `from`'s entries. */
export function refill<K, V>(map: Map<K, V>, from: ReadonlyMap<K, V>): void {
  map.clear();
  for (const [key, value] of from) map.set(key, value);
}

/** Empties `list` and fills it with `from`'s items, in order. */
export function refillList<T>(list: T[], from: readonly T[]): void {
  list.length = 0;
  for (const item of from) list.push(item);
}
