import type { EventStore } from "../../log/index.js";
import {
  type CommandContext,
  continuityNotFound,
  dbFlag,
  NotFoundError,
  type StoreTarget,
  storeNotFound,
  withStore,
} from "../context.js";

/** How a command picks its continuity when none is given. */
export interface ContinuityFallback {
  /** The continuity to look at, or `undefined` when the store has none for the command. */
  find(store: EventStore): Promise<string | undefined>;
  /** The error when `find` finds none: what was missing and how to make one. */
  none(target: StoreTarget): NotFoundError;
}

/** The default fallback: the most recently active continuity (`mostRecentContinuity`). */
export const MOST_RECENT_CONTINUITY: ContinuityFallback = {
  find: (store) => mostRecentContinuity(store),
  none: (target) =>
    new NotFoundError(
      `there are no continuities in ${target.display} yet`,
      `Create one with \`spool continuities create${dbFlag(target)}\``,
    ),
};

/**
 * Opens the store at `target` and runs `body` with the continuity a read-only command looks at:
 * `given` when there is one, else the one `fallback` finds (default the most recently active
 * continuity: newest `lastAt`, ties broken by the newest event). Never creates a store: a
 * missing store, an unknown continuity or a store without one to fall back on is a
 * `NotFoundError` (exit 1) that says how to find one.
 */
export async function withActiveContinuity<T>(
  ctx: CommandContext,
  target: StoreTarget,
  given: string | undefined,
  body: (store: EventStore, continuity: string) => Promise<T>,
  fallback: ContinuityFallback = MOST_RECENT_CONTINUITY,
): Promise<T> {
  if (!target.exists) {
    throw given === undefined ? storeNotFound(target) : continuityNotFound(target, given);
  }
  return withStore(ctx, target, async (store) => {
    const continuity = given ?? (await fallback.find(store));
    if (continuity === undefined) throw fallback.none(target);
    if (given !== undefined && !(await store.continuity(given))) {
      throw continuityNotFound(target, given);
    }
    return body(store, continuity);
  });
}

/** The id of the continuity with the newest activity, or `undefined` for an empty store. */
export async function mostRecentContinuity(store: EventStore): Promise<string | undefined> {
  let best: { continuity: string; at: number; seq: number } | undefined;
  for (const head of await store.continuities()) {
    const at = Date.parse(head.lastAt);
    const time = Number.isNaN(at) ? Number.NEGATIVE_INFINITY : at;
    if (!best || time > best.at || (time === best.at && head.lastSeq > best.seq)) {
      best = { continuity: head.continuity, at: time, seq: head.lastSeq };
    }
  }
  return best?.continuity;
}
