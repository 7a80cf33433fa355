import { useRef, useSyncExternalStore } from "react";
import type { SpoolEvent } from "../api.js";
import { ContinuityLog, type LogSnapshot } from "./continuity-log.js";

const logs = new Map<string, ContinuityLog>();

/**
 * The live log of `continuity`, shared by every page that shows it (one read and one SSE
 * connection per continuity while the dashboard is open). Re-renders on each change.
 */
export function useContinuityLog(continuity: string): LogSnapshot {
  let log = logs.get(continuity);
  if (!log) {
    log = new ContinuityLog(continuity);
    logs.set(continuity, log);
  }
  log.start();
  return useSyncExternalStore(log.subscribe, log.snapshot);
}

/** Drops every open log (after the token changes: each is read again with the new one). */
export function resetLogs(): void {
  for (const log of logs.values()) log.close();
  logs.clear();
}

/** A fold: takes events in seq order. */
export interface Fold {
  push(event: SpoolEvent): void;
}

/**
 * A fold over `events` (an append-only array), fed only the events it has not seen since the last
 * render; made afresh by `create` when `key` changes (another continuity).
 */
export function useFold<F extends Fold>(
  key: string,
  events: readonly SpoolEvent[],
  create: () => F,
): F {
  const ref = useRef<{ key: string; fold: F; fed: number } | null>(null);
  if (ref.current === null || ref.current.key !== key || ref.current.fed > events.length) {
    ref.current = { key, fold: create(), fed: 0 };
  }
  const state = ref.current;
  for (; state.fed < events.length; state.fed++) state.fold.push(events[state.fed]!);
  return state.fold;
}
