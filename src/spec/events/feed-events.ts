import { z } from "zod";
import { actionError } from "./action-events.js";
import { defineEvent, identifier } from "./define-event.js";

const feedId = identifier;
const feedStreams = ["continuity", "thread", "step"] as const;
/** Who changed a feed or variable: the manifest at start, or an internal action of the model. */
const changedBy = {
  by: z.enum(["manifest", "action", "runtime"]),
  action_id: identifier.optional(),
};

/**
 * Context feeds and step variables. Every change is an event, so a replay rebuilds the same
 * feeds and variables without calling any source.
 */
export const feedEvents = {
  "feed.added": defineEvent({
    description: "A context feed was declared (from the manifest or by an internal action).",
    criticality: "critical",
    streams: feedStreams,
    schema: z.strictObject({
      feed_id: feedId,
      /** The feed's definition as validated (manifest shape, `${ENV}` already expanded). */
      definition: z.record(z.string(), z.unknown()),
      ...changedBy,
    }),
  }),
  "feed.updated": defineEvent({
    description: "A context feed's definition changed (interval, params, cache_ttl, …).",
    criticality: "critical",
    streams: feedStreams,
    schema: z.strictObject({
      feed_id: feedId,
      changes: z.record(z.string(), z.unknown()),
      ...changedBy,
    }),
  }),
  "feed.removed": defineEvent({
    description: "A context feed was removed; its periodic refresh stopped.",
    criticality: "critical",
    streams: feedStreams,
    schema: z.strictObject({ feed_id: feedId, ...changedBy }),
  }),
  "feed.refreshed": defineEvent({
    description:
      "A feed's source produced a value (truncated to max_tokens with a marker if over).",
    criticality: "critical",
    streams: feedStreams,
    schema: z.strictObject({
      feed_id: feedId,
      value: z.string(),
      truncated: z.boolean(),
      /** Estimated tokens of `value`. */
      tokens: z.number().int().nonnegative(),
      duration_ms: z.number().nonnegative(),
      trigger: z.enum(["periodic", "on_demand", "initial"]),
    }),
  }),
  "feed.failed": defineEvent({
    description: "A feed's source failed; the last good value (if any) stays in use.",
    criticality: "critical",
    streams: feedStreams,
    schema: z.strictObject({
      feed_id: feedId,
      error: actionError,
      duration_ms: z.number().nonnegative(),
      /** What asked for the refresh that failed (as in `feed.refreshed`). */
      trigger: z.enum(["periodic", "on_demand", "initial"]),
    }),
  }),
  "variable.set": defineEvent({
    description: "A $variable got a value (set_variable, or an action's output_key).",
    criticality: "critical",
    streams: feedStreams,
    schema: z.strictObject({
      name: z.string().min(1).max(128),
      value: z.unknown(),
      ...changedBy,
    }),
  }),
  "variable.deleted": defineEvent({
    description: "A $variable was removed; references to it stay literal text again.",
    criticality: "critical",
    streams: feedStreams,
    schema: z.strictObject({ name: z.string().min(1).max(128), ...changedBy }),
  }),
};
