import { z } from "zod";
import { preview, unknownFields } from "./feed-issues.js";

/** `on_demand`: fetched when a step needs it; `periodic`: refreshed in the background every `interval`. */
export const FEED_TYPES = ["on_demand", "periodic"] as const;
export type FeedType = (typeof FEED_TYPES)[number];

/** Where a feed's value comes from: a built-in of the engine, or an executor of that action type. */
export const FEED_SOURCE_TYPES = ["internal", "tool", "relic", "workflow", "llm"] as const;
export type FeedSourceType = (typeof FEED_SOURCE_TYPES)[number];

/** A feed id is a `$name`: a letter, then letters, digits and `_`; at most 128 characters. */
export const FEED_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
export const FEED_ID_MAX = 128;

/** The shortest `interval` a periodic feed may have, in seconds. */
export const MIN_INTERVAL_SECONDS = 1;

/** An internal source: a built-in of the feed engine (`system_clock`, `random`, `environment`, …). */
export interface InternalSourceRef {
  type: "internal";
  action: string;
  params: Record<string, unknown>;
}

/** A source run through the `ActionExecutor` of its type, as the action `name` with `params`. */
export interface ExecutorSourceRef {
  type: Exclude<FeedSourceType, "internal">;
  name: string;
  params: Record<string, unknown>;
}

export type FeedSourceRef = InternalSourceRef | ExecutorSourceRef;

/**
 * One context feed, in the manifest's own (snake_case) shape: the same shape is written in YAML,
 * taken by `add_context_feed`, and logged in `feed.added`. Times are in seconds.
 *
 * Invariants (checked by `feedDefinitionSchema`): `interval` is present exactly for periodic feeds
 * (at least 1 second); `cache_ttl` only for on_demand feeds; `max_tokens` is a positive integer.
 */
export interface FeedDefinition {
  id: string;
  type: FeedType;
  /** Seconds between background refreshes (periodic only). */
  interval?: number;
  /** Seconds a fetched value is reused (on_demand only); absent: fetched once per step. */
  cache_ttl?: number;
  /** Values over this many estimated tokens are truncated with a marker. */
  max_tokens?: number;
  source: FeedSourceRef;
}

const required = (what: string, otherwise: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? `is required: ${what}` : `${otherwise} (got ${preview(issue.input)})`;

const POSITIVE_INTERVAL = "must be a positive number of seconds for a periodic feed";
const POSITIVE_TTL = "must be a positive number of seconds (how long a fetched value is reused)";
const POSITIVE_TOKENS = "must be a positive whole number of tokens";

/** The feed id rule, with messages that say how to fix a bad one. */
export const feedIdSchema = z
  .string({ error: required("the feed's name, used as $<id>", "must be text") })
  .max(FEED_ID_MAX, `must be at most ${FEED_ID_MAX} characters`)
  .regex(
    FEED_ID_PATTERN,
    "must start with a letter and hold only letters, digits and _ (it is used as $<id>)",
  );

export const feedTypeSchema = z.enum(FEED_TYPES, {
  error: required('"on_demand" or "periodic"', 'must be "on_demand" or "periodic"'),
});

export const intervalSchema = z
  .number({ error: POSITIVE_INTERVAL })
  .refine((value) => value > 0, POSITIVE_INTERVAL)
  .refine(
    (value) => value <= 0 || value >= MIN_INTERVAL_SECONDS,
    `must be at least ${MIN_INTERVAL_SECONDS} second: a periodic feed refreshes at most once a second`,
  );

export const cacheTtlSchema = z
  .number({ error: POSITIVE_TTL })
  .refine((value) => value > 0, POSITIVE_TTL);

export const maxTokensSchema = z
  .number({ error: POSITIVE_TOKENS })
  .refine((value) => Number.isInteger(value) && value > 0, POSITIVE_TOKENS);

const SOURCE_FIELDS = "type, action, name, params";

/** A source as written, before the per-type rules (`action` for internal, `name` otherwise). */
export const feedSourceShape = {
  type: z.enum(FEED_SOURCE_TYPES, {
    error: required(
      `one of ${FEED_SOURCE_TYPES.join(", ")}`,
      `must be one of ${FEED_SOURCE_TYPES.join(", ")}`,
    ),
  }),
  action: z
    .string({ error: "must be the name of a built-in source, e.g. system_clock" })
    .min(1, "must not be empty")
    .max(200, "must be at most 200 characters")
    .optional(),
  name: z
    .string({ error: "must be the name of the tool, relic, workflow or model task to run" })
    .min(1, "must not be empty")
    .max(200, "must be at most 200 characters")
    .optional(),
  params: z
    .record(z.string(), z.unknown(), {
      error: "must be a mapping of parameter names to values",
    })
    .optional(),
};

const sourceSchema = z
  .strictObject(feedSourceShape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(issue.keys, `a feed source has ${SOURCE_FIELDS}`)
        : issue.input === undefined
          ? "is required: where the value comes from ({ type, action | name, params })"
          : `must be a mapping with ${SOURCE_FIELDS}`,
  })
  .superRefine((source, context) => {
    if (source.type === "internal") {
      if (source.action === undefined)
        context.addIssue({
          code: "custom",
          path: ["action"],
          message: "is required for an internal source: the built-in to call, e.g. system_clock",
        });
      if (source.name !== undefined)
        context.addIssue({
          code: "custom",
          path: ["name"],
          message: "is not used by an internal source; write action: <built-in> instead",
        });
    } else {
      if (source.name === undefined)
        context.addIssue({
          code: "custom",
          path: ["name"],
          message: `is required for a ${source.type} source: the ${source.type} to run`,
        });
      if (source.action !== undefined)
        context.addIssue({
          code: "custom",
          path: ["action"],
          message: `is used only by internal sources; a ${source.type} source takes name: <${source.type}>`,
        });
    }
  });

const DEFINITION_FIELDS = "id, type, interval, cache_ttl, max_tokens, source";

/** The fields of a definition as written (no cross-field rules yet). */
export const feedDefinitionShape = {
  id: feedIdSchema,
  type: feedTypeSchema,
  interval: intervalSchema.optional(),
  cache_ttl: cacheTtlSchema.optional(),
  max_tokens: maxTokensSchema.optional(),
  source: sourceSchema,
};

/**
 * Validates one feed definition and normalises it (absent fields dropped, `params` defaulting to
 * `{}`). Unknown fields are errors naming the field. Issue paths are relative to the definition.
 */
export const feedDefinitionSchema: z.ZodType<FeedDefinition> = z
  .strictObject(feedDefinitionShape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(issue.keys, `a context feed has ${DEFINITION_FIELDS}`)
        : `must be a mapping with ${DEFINITION_FIELDS}`,
  })
  .superRefine((feed, context) => {
    if (feed.type === "periodic" && feed.interval === undefined)
      context.addIssue({
        code: "custom",
        path: ["interval"],
        message: `${POSITIVE_INTERVAL}; it is missing`,
      });
    if (feed.type === "on_demand" && feed.interval !== undefined)
      context.addIssue({
        code: "custom",
        path: ["interval"],
        message: "applies only to periodic feeds; remove it or set type: periodic",
      });
    if (feed.type === "periodic" && feed.cache_ttl !== undefined)
      context.addIssue({
        code: "custom",
        path: ["cache_ttl"],
        message:
          "applies only to on_demand feeds (a periodic feed is refreshed every interval); remove it",
      });
  })
  .transform((feed): FeedDefinition => {
    const params = feed.source.params ?? {};
    const source: FeedSourceRef =
      feed.source.type === "internal"
        ? { type: "internal", action: feed.source.action!, params }
        : { type: feed.source.type, name: feed.source.name!, params };
    const definition: FeedDefinition = { id: feed.id, type: feed.type, source };
    if (feed.interval !== undefined) definition.interval = feed.interval;
    if (feed.cache_ttl !== undefined) definition.cache_ttl = feed.cache_ttl;
    if (feed.max_tokens !== undefined) definition.max_tokens = feed.max_tokens;
    return definition;
  });

/** The name a source is known by: the internal `action`, or the executor's `name`. */
export function sourceName(source: FeedSourceRef): string {
  return source.type === "internal" ? source.action : source.name;
}
