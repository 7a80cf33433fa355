import type { EventStore } from "../../src/log/index.js";
import { withAppends } from "./store-taps.js";

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
  const store = withAppends(inner, {
    append: (event) => (dies([event]) ? never : inner.append(event)),
    appendBatch: (events, options) => (dies(events) ? never : inner.appendBatch(events, options)),
  });
  return { store, died: diedNow };
}
