import type { z } from "zod";
import type { FeedEnv } from "./env-expansion.js";
import type { EnvironmentPolicy } from "./environment-policy.js";
import type { InternalSourceRef } from "./feed-definition.js";
import { FeedError } from "./feed-error.js";
import { describeIssues, zodFeedIssues } from "./feed-issues.js";

/** What an internal source is given when it reads (everything injected, so tests are exact). */
export interface InternalSourceContext {
  feedId: string;
  /** The engine clock's time, milliseconds since the Unix epoch. */
  now: number;
  /** The engine's random source: a number in [0, 1). */
  random(): number;
  env: FeedEnv;
  environment: EnvironmentPolicy;
  /** Aborted when the read times out or its feed is removed; a long read should stop. */
  signal: AbortSignal;
}

/** What `check` is given: the facts a definition can be judged by before anything runs. */
export type InternalSourceCheckContext = Pick<InternalSourceContext, "feedId" | "environment">;

/**
 * A built-in feed source, called by `source: { type: internal, action: <name>, params }`.
 *
 * Contract: `parameters` validates `params` (messages name the field); `check` refuses what the
 * engine's policy forbids, with a `FeedError`, and runs when a feed is added and before every
 * read; `read` returns the value (a string, or any JSON value, rendered as pretty JSON) and may
 * throw, which records `feed.failed` and keeps the last good value.
 */
export interface InternalFeedSource<P = unknown> {
  readonly name: string;
  /** One sentence for docs and error messages. */
  readonly description: string;
  readonly parameters: z.ZodType<P>;
  check?(params: P, context: InternalSourceCheckContext): void;
  read(params: P, context: InternalSourceContext): unknown;
}

/** Declares an internal source; the identity function that keeps its parameter type. */
export function defineInternalSource<P>(source: InternalFeedSource<P>): InternalFeedSource<P> {
  return source;
}

/** Internal sources by name. */
export type InternalSources = Readonly<Record<string, InternalFeedSource>>;

/**
 * Finds the source `ref.action` names, validates `ref.params` and runs its `check`.
 * Throws `FeedError` `feed.unknown-source` (listing the names there are) or `feed.invalid`
 * (naming each bad parameter as `source.params.<field>`), or whatever `check` throws.
 */
export function prepareInternalSource(
  sources: InternalSources,
  ref: InternalSourceRef,
  context: InternalSourceCheckContext,
): { source: InternalFeedSource; params: unknown } {
  const source = Object.hasOwn(sources, ref.action) ? sources[ref.action] : undefined;
  if (!source) {
    throw new FeedError(
      "feed.unknown-source",
      `feed "${context.feedId}": there is no internal source "${ref.action}" (there are: ${Object.keys(sources).join(", ")})`,
      {
        hint: "Use one of those, or pass your own to createFeedEngine({ internalSources })",
        details: { feed_id: context.feedId, action: ref.action },
      },
    );
  }
  const parsed = source.parameters.safeParse(ref.params);
  if (!parsed.success) {
    const issues = zodFeedIssues(parsed.error, ["source", "params"]);
    throw new FeedError("feed.invalid", `feed "${context.feedId}": ${describeIssues(issues)}`, {
      details: { feed_id: context.feedId, issues },
    });
  }
  source.check?.(parsed.data, context);
  return { source, params: parsed.data };
}
