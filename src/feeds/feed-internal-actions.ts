import { z } from "zod";
import type { InternalActionContext, InternalActionDefinition } from "../actions/index.js";
import { feedDefinitionSchema, feedIdSchema } from "./feed-definition.js";
import type { FeedChangeOrigin, FeedEngine } from "./feed-engine.js";
import { unknownFields } from "./feed-issues.js";
import { feedUpdateSchema } from "./feed-update.js";

/** The names of the feed internal actions. */
export const FEED_ACTION_NAMES = [
  "add_context_feed",
  "remove_context_feed",
  "update_context_feed",
] as const;

const removeSchema = z.strictObject(
  { id: feedIdSchema },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(issue.keys, "remove_context_feed takes only id")
        : "must be a mapping with the id of the feed to remove",
  },
);

/** The three feed actions, in the actions module's `InternalActionDefinition` shape. */
export type FeedInternalActions = [
  InternalActionDefinition<typeof feedDefinitionSchema>,
  InternalActionDefinition<typeof removeSchema>,
  InternalActionDefinition<typeof feedUpdateSchema>,
];

/**
 * What the feed actions change: a `FeedEngine`, or anything that hands their requests to one (the
 * runtime's session passes the engine it starts on first use).
 */
export type FeedChanger = Pick<FeedEngine, "add" | "remove" | "update">;

/** What the feed actions read from their context: the action's id, and its step's log. */
type FeedActionContext = Pick<InternalActionContext, "actionId"> &
  Partial<Pick<InternalActionContext, "log">>;

/**
 * The feed actions bound to `engine`, for `createInternalExecutor({ actions })`. Each records its
 * change through the step's log (`context.log`) with `by: "action"` and the action's id, before
 * it resolves:
 *
 * - `add_context_feed` takes a whole definition (`id`, `type`, `source`, `interval`,
 *   `cache_ttl`, `max_tokens`) and returns `{ id, status: "added", type }`; a periodic feed starts
 *   refreshing at once (when the engine is started), an on_demand one is fetched when the next
 *   step resolves it. `${VAR}` is not expanded: the model never reads the environment through a
 *   definition.
 * - `remove_context_feed` takes `{ id }` and returns `{ id, status: "removed" }`.
 * - `update_context_feed` takes `{ id, ...fields }` (`null` clears a field) and returns
 *   `{ id, status: "updated" | "unchanged", changed: [fields] }`.
 *
 * Errors are thrown `FeedError`s (the scheduler records `action.failed`): `feed.invalid` naming
 * the field, `feed.duplicate`, `feed.unknown`, `feed.unknown-source`, `feed.env-not-allowed`.
 * Which actions the model may call is the manifest's `internal_actions` policy, enforced by the
 * internal executor.
 */
export function feedInternalActions(engine: FeedChanger): FeedInternalActions {
  return [
    {
      name: "add_context_feed",
      description: "Adds a context feed: its value appears in every later prompt and as $<id>.",
      parameters: feedDefinitionSchema,
      async run(params, context: FeedActionContext) {
        const feed = await engine.add(params, origin(context));
        return { id: feed.id, status: "added", type: feed.type };
      },
    },
    {
      name: "remove_context_feed",
      description: "Removes a context feed and stops its refreshes.",
      parameters: removeSchema,
      async run(params: z.output<typeof removeSchema>, context: FeedActionContext) {
        await engine.remove(params.id, origin(context));
        return { id: params.id, status: "removed" };
      },
    },
    {
      name: "update_context_feed",
      description:
        "Changes a context feed's type, interval, cache_ttl, max_tokens or source (null clears a field).",
      parameters: feedUpdateSchema,
      async run(params, context: FeedActionContext) {
        const { changes } = await engine.update(params, origin(context));
        const changed = Object.keys(changes);
        return { id: params.id, status: changed.length ? "updated" : "unchanged", changed };
      },
    },
  ];
}

function origin(context: FeedActionContext): FeedChangeOrigin {
  return {
    by: "action",
    actionId: context.actionId,
    ...(context.log ? { log: context.log } : {}),
  };
}
