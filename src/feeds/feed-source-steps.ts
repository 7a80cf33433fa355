import { createHash } from "node:crypto";

/** How the step streams of feed source reads begin (`feed@<feed id>`). */
export const FEED_SOURCE_STEP_PREFIX = "feed@";

/** The longest stream id the log takes (the event catalog's identifier limit). */
const STREAM_ID_MAX = 128;

/**
 * The step stream a feed's source reads are recorded on when they take the runtime's action
 * path: `feed@<id>`. An id too long for a stream id keeps its first characters and gets a digest
 * of the whole id, so two long ids never share a stream. Never a model step (`<thread>:<n>`):
 * a thread's history never takes a feed read for the model's action.
 */
export function feedSourceStep(feedId: string): string {
  const plain = `${FEED_SOURCE_STEP_PREFIX}${feedId}`;
  if (plain.length <= STREAM_ID_MAX) return plain;
  const digest = createHash("sha256").update(feedId).digest("hex").slice(0, 16);
  return `${plain.slice(0, STREAM_ID_MAX - 17)}.${digest}`;
}

/**
 * True for a stream a feed's source read wrote: its step (`feed@<id>`) and the task and step
 * streams of a workflow it ran (named after that step). These record the world the feed engine
 * read, as `feed.refreshed` does: a replay serves the feeds from the log and re-derives none of it.
 */
export function isFeedSourceStream(id: string): boolean {
  return id.startsWith(FEED_SOURCE_STEP_PREFIX);
}
