import { z } from "zod";
import { canonicalJson } from "../spec/index.js";
import {
  cacheTtlSchema,
  type FeedDefinition,
  feedDefinitionSchema,
  feedIdSchema,
  feedSourceShape,
  feedTypeSchema,
  intervalSchema,
  maxTokensSchema,
} from "./feed-definition.js";
import { FeedError } from "./feed-error.js";
import { describeIssues, unknownFields, zodFeedIssues } from "./feed-issues.js";

/**
 * What `update_context_feed` takes: the `id` and the fields to change. `null` removes an optional
 * field (`cache_ttl: null` turns caching off). A `source` is merged over the current source at
 * its top level (so `{ params: {...} }` swaps the params and keeps the tool); a source of another
 * `type` replaces it whole.
 */
export const feedUpdateSchema = z.strictObject(
  {
    id: feedIdSchema,
    type: feedTypeSchema.optional(),
    interval: intervalSchema.nullable().optional(),
    cache_ttl: cacheTtlSchema.nullable().optional(),
    max_tokens: maxTokensSchema.nullable().optional(),
    source: z
      .strictObject(
        {
          type: feedSourceShape.type.optional(),
          action: feedSourceShape.action,
          name: feedSourceShape.name,
          params: feedSourceShape.params,
        },
        {
          error: (issue) =>
            issue.code === "unrecognized_keys"
              ? unknownFields(issue.keys, "a feed source has type, action, name, params")
              : "must be a mapping with any of type, action, name, params",
        },
      )
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(
            issue.keys,
            "update_context_feed takes id, type, interval, cache_ttl, max_tokens, source",
          )
        : "must be a mapping with id and the fields to change",
  },
);

export type FeedUpdate = z.output<typeof feedUpdateSchema>;

/** Field → new value, `null` for a field removed: the `changes` of a `feed.updated` event. */
export type FeedChanges = Record<string, unknown>;

/**
 * Applies `update` to `current` and validates the result as a whole definition.
 *
 * Switching `type` drops the field the new type does not take (`interval` when it becomes
 * on_demand, `cache_ttl` when it becomes periodic) unless the update sets it. Returns the new
 * definition and exactly the fields that changed (`{}` when nothing did). Throws
 * `FeedError("feed.invalid")` naming each bad field.
 */
export function mergeFeedUpdate(
  current: FeedDefinition,
  update: FeedUpdate,
): { definition: FeedDefinition; changes: FeedChanges } {
  const next: Record<string, unknown> = { ...current, source: { ...current.source } };
  if (update.type !== undefined && update.type !== current.type) {
    next.type = update.type;
    if (update.type === "on_demand" && update.interval === undefined) delete next.interval;
    if (update.type === "periodic" && update.cache_ttl === undefined) delete next.cache_ttl;
  }
  for (const field of ["interval", "cache_ttl", "max_tokens"] as const) {
    const value = update[field];
    if (value === null) delete next[field];
    else if (value !== undefined) next[field] = value;
  }
  if (update.source) {
    const given = Object.fromEntries(
      Object.entries(update.source).filter(([, value]) => value !== undefined),
    );
    next.source =
      given.type !== undefined && given.type !== current.source.type
        ? given
        : { ...current.source, ...given };
  }
  const parsed = feedDefinitionSchema.safeParse(next);
  if (!parsed.success) {
    const issues = zodFeedIssues(parsed.error, []);
    throw new FeedError(
      "feed.invalid",
      `update_context_feed would make feed "${current.id}" invalid: ${describeIssues(issues)}`,
      { details: { feed_id: current.id, issues } },
    );
  }
  return { definition: parsed.data, changes: diffDefinitions(current, parsed.data) };
}

/** The top-level fields whose values differ from `before` to `after` (`null` where removed). */
export function diffDefinitions(before: FeedDefinition, after: FeedDefinition): FeedChanges {
  const changes: FeedChanges = {};
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    const a = (before as unknown as Record<string, unknown>)[key];
    const b = (after as unknown as Record<string, unknown>)[key];
    if (b === undefined) {
      if (a !== undefined) changes[key] = null;
    } else if (a === undefined || canonicalJson(a) !== canonicalJson(b)) {
      changes[key] = b;
    }
  }
  return changes;
}

/**
 * The definition after logged `changes` (as `diffDefinitions` made them): each field set, or
 * removed where `null`. Throws `FeedError("feed.replay-invalid")` when the result is not a valid
 * definition.
 */
export function applyDefinitionChanges(
  current: FeedDefinition,
  changes: FeedChanges,
): FeedDefinition {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  const parsed = feedDefinitionSchema.safeParse(next);
  if (!parsed.success) {
    throw new FeedError(
      "feed.replay-invalid",
      `feed.updated for "${current.id}" gives an invalid definition: ${describeIssues(
        zodFeedIssues(parsed.error, []),
      )}`,
      { details: { feed_id: current.id } },
    );
  }
  return parsed.data;
}

/** True when two definitions are the same (key order ignored). */
export function sameDefinition(a: FeedDefinition, b: FeedDefinition): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
