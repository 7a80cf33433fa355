import type { EventData } from "../spec/index.js";
import { type FeedDefinition, feedDefinitionSchema } from "./feed-definition.js";
import { FeedError } from "./feed-error.js";
import { describeIssues, zodFeedIssues } from "./feed-issues.js";
import { FEED_EVENT_TYPES, type FeedEventType } from "./feed-log.js";
import { applyDefinitionChanges } from "./feed-update.js";

/** Who added (or last redefined) a feed: the manifest, a model's internal action, or host code. */
export type FeedOwner = "manifest" | "action" | "runtime";

/** A source failure as logged: a stable code and a message. */
export interface FeedFailure {
  code: string;
  message: string;
  retryable?: boolean;
}

/** One feed in the registry: its definition and the last value its source produced. */
export interface FeedRecord {
  definition: FeedDefinition;
  owner: FeedOwner;
  /** The last good value (after `max_tokens`); absent until a refresh succeeded. */
  value?: string;
  tokens?: number;
  truncated?: boolean;
  /** When `value` was recorded (the event's time). */
  refreshedAt?: string;
  /** Set when the latest attempt failed; cleared by the next success. */
  error?: FeedFailure;
  failedAt?: string;
}

/**
 * The feed registry: every feed, in the order it was added. A pure fold over feed events, so the
 * live engine and `replayFeeds` reach the same state from the same log.
 */
export interface FeedRegistryState {
  feeds: Map<string, FeedRecord>;
}

/** A logged feed event as the fold needs it; `ts` is the event's time (absent: left unset). */
export interface FeedEventLike {
  type: string;
  data: unknown;
  ts?: string;
}

/** A registry with no feeds. */
export function emptyFeedState(): FeedRegistryState {
  return { feeds: new Map() };
}

/** A deep copy of `state` (what the engine hands out, so callers cannot change its registry). */
export function cloneFeedState(state: FeedRegistryState): FeedRegistryState {
  return structuredClone(state);
}

const isFeedEvent = (type: string): type is FeedEventType =>
  (FEED_EVENT_TYPES as readonly string[]).includes(type);

/**
 * Applies one event to `state` (mutating and returning it). Events of other types, and events
 * about a feed the registry does not have, change nothing.
 *
 * - `feed.added` puts the definition in (replacing one of the same id).
 * - `feed.updated` applies the changes; a changed `source` drops the old value, which came from
 *   another source. The definition's new owner is the updater when that is the manifest.
 * - `feed.removed` takes the feed out.
 * - `feed.refreshed` sets the value and clears the error; `feed.failed` sets the error and keeps
 *   the value.
 *
 * Throws `FeedError("feed.replay-invalid")` when an event's definition does not validate.
 */
export function applyFeedEvent(state: FeedRegistryState, event: FeedEventLike): FeedRegistryState {
  if (!isFeedEvent(event.type)) return state;
  switch (event.type) {
    case "feed.added": {
      const data = event.data as EventData<"feed.added">;
      state.feeds.set(data.feed_id, {
        definition: parseDefinition(data.definition),
        owner: data.by,
      });
      return state;
    }
    case "feed.updated": {
      const data = event.data as EventData<"feed.updated">;
      const record = state.feeds.get(data.feed_id);
      if (!record) return state;
      record.definition = applyDefinitionChanges(record.definition, data.changes);
      if (data.by === "manifest") record.owner = "manifest";
      if (Object.hasOwn(data.changes, "source")) {
        delete record.value;
        delete record.tokens;
        delete record.truncated;
        delete record.refreshedAt;
        delete record.error;
        delete record.failedAt;
      }
      return state;
    }
    case "feed.removed": {
      state.feeds.delete((event.data as EventData<"feed.removed">).feed_id);
      return state;
    }
    case "feed.refreshed": {
      const data = event.data as EventData<"feed.refreshed">;
      const record = state.feeds.get(data.feed_id);
      if (!record) return state;
      record.value = data.value;
      record.tokens = data.tokens;
      record.truncated = data.truncated;
      setOrDelete(record, "refreshedAt", event.ts);
      delete record.error;
      delete record.failedAt;
      return state;
    }
    case "feed.failed": {
      const data = event.data as EventData<"feed.failed">;
      const record = state.feeds.get(data.feed_id);
      if (!record) return state;
      record.error = { ...data.error };
      setOrDelete(record, "failedAt", event.ts);
      return state;
    }
  }
}

function setOrDelete(
  record: FeedRecord,
  key: "refreshedAt" | "failedAt",
  value: string | undefined,
) {
  if (value === undefined) delete record[key];
  else record[key] = value;
}

function parseDefinition(definition: unknown): FeedDefinition {
  const parsed = feedDefinitionSchema.safeParse(definition);
  if (parsed.success) return parsed.data;
  const issues = zodFeedIssues(parsed.error, ["definition"]);
  throw new FeedError(
    "feed.replay-invalid",
    `feed.added carries an invalid definition: ${describeIssues(issues)}`,
    { details: { issues } },
  );
}
