import type { EventStore } from "../../src/log/index.js";
import type { SpoolEvent } from "../../src/spec/index.js";

/** How a wrapped store appends: each replaces the inner store's method of that name. */
export type StoreAppends = Pick<EventStore, "append" | "appendBatch">;

/**
 * `inner` with its appends replaced by `appends` and every other method delegated: a test's way to
 * watch appends (`tapStored`) or make them never complete (a process that dies mid-append).
 */
export function withAppends(inner: EventStore, appends: StoreAppends): EventStore {
  return {
    kind: inner.kind,
    location: inner.location,
    ...(inner.durability ? { durability: inner.durability } : {}),
    ...(inner.holdsAnswers ? { holdsAnswers: true } : {}),
    artifacts: inner.artifacts,
    append: appends.append,
    appendBatch: appends.appendBatch,
    flush: () => inner.flush(),
    read: (query) => inner.read(query),
    ...(inner.readRecent
      ? { readRecent: (continuity: string, after: number) => inner.readRecent!(continuity, after) }
      : {}),
    ...(inner.readAhead
      ? { readAhead: (continuity: string, after: number) => inner.readAhead!(continuity, after) }
      : {}),
    fold: (query, projection) => inner.fold(query, projection),
    subscribe: (options) => inner.subscribe(options),
    head: () => inner.head(),
    continuities: () => inner.continuities(),
    continuity: (id) => inner.continuity(id),
    acquireLease: (continuity, holder, ttlMs) => inner.acquireLease(continuity, holder, ttlMs),
    renewLease: (continuity, token, ttlMs) => inner.renewLease(continuity, token, ttlMs),
    releaseLease: (continuity, token) => inner.releaseLease(continuity, token),
    lease: (continuity) => inner.lease(continuity),
    close: () => inner.close(),
  };
}

/** `inner`, calling `stored` with every event once its append has resolved (it is durable). */
export function tapStored(inner: EventStore, stored: (event: SpoolEvent) => void): EventStore {
  return withAppends(inner, {
    append: (event) =>
      inner.append(event).then((event) => {
        stored(event);
        return event;
      }),
    appendBatch: (events, options) =>
      inner.appendBatch(events, options).then((events) => {
        for (const event of events) stored(event);
        return events;
      }),
  });
}

/**
 * `inner`, refusing the `action.dispatched` of each action `refuses` names: the store itself
 * refuses it (the event fails validation), as a full disk would, so what is appended `after` it
 * is refused with it.
 */
export function refusingIntents(
  inner: EventStore,
  refuses: (actionId: string) => boolean,
): EventStore {
  const spoil = <E extends { type: string; data?: unknown }>(event: E): E => {
    const id = (event.data as { action_id?: string } | undefined)?.action_id;
    if (event.type !== "action.dispatched" || id === undefined || !refuses(id)) return event;
    return { ...event, data: { ...(event.data as object), mode: "never" } };
  };
  return withAppends(inner, {
    append: (event) => inner.append(spoil(event)),
    appendBatch: (events, options) => inner.appendBatch(events.map(spoil), options),
  });
}
