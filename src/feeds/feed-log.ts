import type { ActionLog } from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import type { AnyNewEvent, StreamRef } from "../spec/index.js";

/** The event types the feed engine writes. */
export const FEED_EVENT_TYPES = [
  "feed.added",
  "feed.updated",
  "feed.removed",
  "feed.refreshed",
  "feed.failed",
] as const;
export type FeedEventType = (typeof FEED_EVENT_TYPES)[number];

/**
 * Where the feed engine records its events: the actions module's `ActionLog` (`record(type,
 * data)`), so a step's log can take the feed events its internal actions cause, and the engine's
 * own log (`eventStoreFeedLog`) the rest.
 *
 * Contract (the `ActionLog`'s): `record` validates against the catalog, resolves once the event
 * is durable and rejects when it could not be written. The engine changes its state only after
 * `record` resolved, and records one event at a time, so the log's order is the order the state
 * changed in.
 */
export type FeedLog = ActionLog;

/** Where in a continuity feed events go: the continuity's own stream unless `stream` is given. */
export interface FeedLogTarget {
  continuity: string;
  /** A `continuity`, `thread` or `step` stream (the kinds the catalog allows feed events on). */
  stream?: StreamRef;
}

/**
 * A `FeedLog` that appends to an `EventStore`, on the continuity's stream (or `target.stream`):
 * the engine's log for what no step caused (the manifest at start, background refreshes).
 */
export function eventStoreFeedLog(
  store: Pick<EventStore, "append">,
  target: FeedLogTarget,
): FeedLog {
  return {
    async record(type, data) {
      await store.append({
        continuity: target.continuity,
        ...(target.stream ? { stream: target.stream } : {}),
        type,
        data,
      } as AnyNewEvent);
    },
  };
}
