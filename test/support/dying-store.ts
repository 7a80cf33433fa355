import type { EventStore } from "../../src/log/index.js";

/**
 * The store as a process that dies at the first append of `type` (whose data passes `when`) sees it: that append and every
 * later one never complete and write nothing.
 */
export function dyingAt(
  inner: EventStore,
  type: string,
  when: (data: unknown) => boolean = () => true,
): { store: EventStore; died: Promise<void> } {
  let dead = false;
  let died: () => void = () => {};
  const diedNow = new Promise<void>((resolve) => {
    died = resolve;
  });
  const never = new Promise<never>(() => {});
  const dies = (events: readonly { type: string; data?: unknown }[]) => {
    if (events.some((event) => event.type === type && when(event.data))) {
      dead = true;
      died();
    }
    return dead;
  };
  const store: EventStore = {
    kind: inner.kind,
    location: inner.location,
    artifacts: inner.artifacts,
    append: (event) => (dies([event]) ? never : inner.append(event)),
    appendBatch: (events) => (dies(events) ? never : inner.appendBatch(events)),
    flush: () => inner.flush(),
    read: (query) => inner.read(query),
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
  return { store, died: diedNow };
}
