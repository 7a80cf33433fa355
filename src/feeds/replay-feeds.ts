import type { Projection } from "../log/index.js";
import {
  applyFeedEvent,
  cloneFeedState,
  emptyFeedState,
  type FeedEventLike,
  type FeedRegistryState,
} from "./feed-state.js";

/**
 * Rebuilds the feed registry (definitions, owners, last values and errors) from logged events,
 * in log order, without calling any source. Events that are not feed events are skipped, so a
 * whole continuity's events can be passed. `from` (copied, never changed) is the state to start
 * from; default empty.
 */
export function replayFeeds(
  events: Iterable<FeedEventLike>,
  from?: FeedRegistryState,
): FeedRegistryState {
  const state = from ? cloneFeedState(from) : emptyFeedState();
  for (const event of events) applyFeedEvent(state, event);
  return state;
}

/**
 * The same fold as a store projection: `store.fold({ continuity, types: FEED_EVENT_TYPES },
 * feedProjection)` replays a continuity's feeds straight from the log, page by page.
 */
export const feedProjection: Projection<FeedRegistryState> = {
  initial: emptyFeedState,
  reduce: (state, event) => applyFeedEvent(state, event),
};
