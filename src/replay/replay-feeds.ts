import { type FeedRegistryState, replayFeeds } from "../feeds/index.js";
import type { RecordedStepFeeds } from "../runtime/index.js";
import type { SpoolEvent } from "../spec/index.js";

/** What a replay serves of the original's feeds (see `ReplayWorldParts`). */
export interface RecordedFeeds {
  /** A step's rendered feeds and `$id` values, from its `context.feeds`. */
  step(step: string): RecordedStepFeeds | undefined;
  /** The feed registry the original had when the action `actionId` of `step` ran. */
  registry(step: string, actionId: string): FeedRegistryState;
}

/** The events that end an action: the registry before one of them is what the action met. */
const ACTION_ENDS = new Set(["action.succeeded", "action.failed", "action.skipped"]);

/**
 * The original's feeds, from its log: each step's `context.feeds`, and the registry each of the
 * model's feed actions met: every feed event the log has before that action's first feed event
 * (or its end, when it changed nothing), folded as the live engine folded them.
 */
export function recordedFeedsOf(events: readonly SpoolEvent[]): RecordedFeeds {
  const steps = new Map<string, RecordedStepFeeds>();
  for (const event of events) {
    if (event.type === "context.feeds") steps.set(event.stream.id, event.data as RecordedStepFeeds);
  }
  return {
    step: (step) => steps.get(step),
    registry(step, actionId) {
      const mark = events.find(
        (event) =>
          event.stream.kind === "step" &&
          event.stream.id === step &&
          (event.data as { action_id?: unknown } | undefined)?.action_id === actionId &&
          (event.type.startsWith("feed.") || ACTION_ENDS.has(event.type)),
      );
      const before = mark?.seq ?? Number.POSITIVE_INFINITY;
      return replayFeeds(events.filter((event) => event.seq < before));
    },
  };
}
