import type { FeedType } from "./feed-definition.js";
import type { FeedFailure, FeedRegistryState } from "./feed-state.js";

/** One feed as a step sees it. */
export interface FeedSnapshotEntry {
  id: string;
  type: FeedType;
  /** The last good value (truncated to `max_tokens`, marker included); absent if there is none. */
  value?: string;
  tokens?: number;
  truncated?: boolean;
  refreshedAt?: string;
  /** The latest attempt's failure; with a `value` present, that value is stale. */
  error?: FeedFailure;
}

/** The feeds of one step, in the order they were added. Plain data: safe to keep and compare. */
export type FeedSnapshot = readonly FeedSnapshotEntry[];

/**
 * The feeds of `state` as a snapshot: all of them, or those in `ids` that exist (unknown ids are
 * left out, so a list of `$names` can be passed as it is). Never fetches anything.
 */
export function snapshotFeeds(state: FeedRegistryState, ids?: readonly string[]): FeedSnapshot {
  const wanted = ids ? new Set(ids) : undefined;
  const entries: FeedSnapshotEntry[] = [];
  for (const [id, record] of state.feeds) {
    if (wanted && !wanted.has(id)) continue;
    const entry: FeedSnapshotEntry = { id, type: record.definition.type };
    if (record.value !== undefined) entry.value = record.value;
    if (record.tokens !== undefined) entry.tokens = record.tokens;
    if (record.truncated !== undefined) entry.truncated = record.truncated;
    if (record.refreshedAt !== undefined) entry.refreshedAt = record.refreshedAt;
    if (record.error !== undefined) entry.error = { ...record.error };
    entries.push(entry);
  }
  return entries;
}
