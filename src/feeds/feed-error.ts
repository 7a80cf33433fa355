import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Codes a context feed raises; each message says what was wrong and how to fix it. */
export type FeedErrorCode =
  /** A definition (from an action or the host) failed validation. */
  | "feed.invalid"
  /** No feed has the id named. */
  | "feed.unknown"
  /** A feed with that id already exists. */
  | "feed.duplicate"
  /** An internal source (or an executor's tool, relic, …) of that name does not exist. */
  | "feed.unknown-source"
  /** No `ActionExecutor` of the source's type was given to the engine. */
  | "feed.no-executor"
  /** An `environment` source named a variable the allow-list does not let through. */
  | "feed.env-not-allowed"
  /** The source did not answer within the engine's source timeout. */
  | "feed.timeout"
  /** The source's value cannot be rendered as text (a cycle, a bigint). */
  | "feed.unrenderable"
  /** The source threw something that is not a `SpoolError`. */
  | "feed.source-failed"
  /** A refresh was abandoned because its feed was removed or changed, or the engine stopped. */
  | "feed.cancelled"
  /** A logged feed event could not be replayed (its data does not fit the current schema). */
  | "feed.replay-invalid";

/** `feed.unknown` for `id`, listing the feeds there are. */
export function unknownFeedError(id: string, known: readonly string[]): FeedError {
  return new FeedError(
    "feed.unknown",
    `there is no context feed "${id}" (${known.length ? `feeds: ${known.join(", ")}` : "there are no feeds"})`,
    {
      hint: "Use one of the existing ids, or add the feed with add_context_feed",
      details: { feed_id: id },
    },
  );
}

/**
 * A failure of a context feed: a bad definition, an unknown id, or a source that failed.
 * Thrown from the engine's `add` / `update` / `remove` (and so from the internal actions); a
 * source failure is never thrown from a refresh but recorded as `feed.failed` with this code.
 */
export class FeedError extends SpoolError {
  declare readonly code: FeedErrorCode;

  constructor(code: FeedErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}
