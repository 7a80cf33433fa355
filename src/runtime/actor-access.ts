import type { EventStore } from "../log/index.js";
import { type EventData, SpoolError, type SpoolEvent } from "../spec/index.js";

/** The access an `actor.added` grants. */
export type ActorAccessLevel = EventData<"actor.added">["access"];

/**
 * Who may add input to a continuity, folded from its log (`applyActorEvent`): the actor that
 * created it (its owner), the actors added with their access, and those removed.
 */
export interface ActorRoster {
  /** The actor of `continuity.created`, the continuity's owner. */
  creator?: string;
  /**
   * Whether the continuity keeps an access list: true once any `actor.added` was appended. Until
   * then it is open, and any actor adds turns (a single-user workspace, an embedded runtime).
   */
  listed: boolean;
  /** Actors added and not removed since, with their access. */
  actors: Map<string, ActorAccessLevel>;
  /** Actors removed and not added again since. */
  removed: Set<string>;
}

/** Why an actor may not add a turn. */
export type TurnRefusal = "read-only" | "removed" | "unknown";

/** The event types `applyActorEvent` folds: a read of only these gives the whole roster. */
export const ACTOR_EVENT_TYPES = ["continuity.created", "actor.added", "actor.removed"] as const;

/** A roster of a continuity with no events. */
export function emptyActorRoster(): ActorRoster {
  return { listed: false, actors: new Map(), removed: new Set() };
}

/** Applies one event to `roster` in place; events other than `ACTOR_EVENT_TYPES` change nothing. */
export function applyActorEvent(roster: ActorRoster, event: SpoolEvent): void {
  if (event.type === "continuity.created") {
    if (roster.creator === undefined && event.actor) roster.creator = event.actor;
  } else if (event.type === "actor.added") {
    const data = event.data as EventData<"actor.added">;
    roster.listed = true;
    roster.actors.set(data.actor_id, data.access);
    roster.removed.delete(data.actor_id);
  } else if (event.type === "actor.removed") {
    const data = event.data as EventData<"actor.removed">;
    roster.actors.delete(data.actor_id);
    roster.removed.add(data.actor_id);
  }
}

/**
 * Why `actor` may not add a turn, or `undefined` when it may. An actor removed (the creator
 * too) may not; one added read-only may not; one added with `write` or `owner` access may, and so
 * may the creator; anyone else may only while the continuity keeps no access list. Pure.
 */
export function turnRefusal(roster: ActorRoster, actor: string): TurnRefusal | undefined {
  if (roster.removed.has(actor)) return "removed";
  const access = roster.actors.get(actor);
  if (access === "read") return "read-only";
  if (access !== undefined || actor === roster.creator || !roster.listed) return undefined;
  return "unknown";
}

const REFUSED: Record<TurnRefusal, { what: string; hint: string }> = {
  "read-only": {
    what: "was added read-only",
    hint: "An owner can add it again with write access (spool actors add <continuity> <actor> --access write)",
  },
  removed: {
    what: "was removed from it",
    hint: "An owner can add it again (spool actors add <continuity> <actor>)",
  },
  unknown: {
    what: "is not on its access list",
    hint: "An owner can add it (spool actors add <continuity> <actor>); spool actors <continuity> lists who may write",
  },
};

/**
 * An actor tried to add a turn to a continuity it may not write to. `code` is `actor.<reason>`:
 * `actor.read-only`, `actor.removed` or `actor.unknown`. Nothing was appended.
 */
export class ActorAccessError extends SpoolError {
  readonly reason: TurnRefusal;
  readonly actor: string;

  constructor(continuity: string, actor: string, reason: TurnRefusal) {
    const refused = REFUSED[reason];
    super(
      `actor.${reason}`,
      `actor "${actor}" may not add turns to continuity "${continuity}": it ${refused.what}`,
      { hint: refused.hint, details: { continuity, actor, reason } },
    );
    this.reason = reason;
    this.actor = actor;
  }
}

/** Throws `ActorAccessError` when `roster` refuses `actor` a turn (`turnRefusal`). */
export function checkTurnActor(roster: ActorRoster, continuity: string, actor: string): void {
  const reason = turnRefusal(roster, actor);
  if (reason !== undefined) throw new ActorAccessError(continuity, actor, reason);
}

/**
 * The rosters of a store's continuities, each kept up to date by reading only the actor events
 * appended after the last read (`after` its seq): a check costs the events since the previous one,
 * not the continuity's length. Sees what other processes appended by the time it reads.
 */
export class ActorRosters {
  readonly #store: EventStore;
  readonly #rosters = new Map<string, { roster: ActorRoster; after: number }>();

  constructor(store: EventStore) {
    this.#store = store;
  }

  /** The roster of `continuity`, read up to the store's present. */
  async roster(continuity: string): Promise<ActorRoster> {
    let known = this.#rosters.get(continuity);
    if (!known) {
      known = { roster: emptyActorRoster(), after: 0 };
      this.#rosters.set(continuity, known);
    }
    const head = (await this.#store.continuity(continuity))?.lastSeq ?? 0;
    if (head <= known.after) return known.roster;
    for await (const event of this.#store.read({
      continuity,
      types: ACTOR_EVENT_TYPES,
      after: known.after,
      until: head,
    })) {
      applyActorEvent(known.roster, event);
    }
    known.after = head;
    return known.roster;
  }

  /** Throws `ActorAccessError` unless `actor` may add a turn to `continuity` now. */
  async check(continuity: string, actor: string): Promise<void> {
    checkTurnActor(await this.roster(continuity), continuity, actor);
  }
}
