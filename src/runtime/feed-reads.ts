import { isFeedSourceStream } from "../feeds/index.js";
import type { EventStore, Projection } from "../log/index.js";
import type { EventData, EventType } from "../spec/index.js";

/** The events that end an action's lifecycle. */
const ACTION_ENDS = [
  "action.succeeded",
  "action.failed",
  "action.timed-out",
  "action.skipped",
  "action.cancelled",
  "action.interrupted",
] as const satisfies readonly EventType[];

/** A feed source read dispatched and not ended: where it is, and what it ran. */
interface OpenRead {
  step: string;
  actionId: string;
  name: string;
}

const openReads: Projection<Map<string, OpenRead>> = {
  initial: () => new Map(),
  reduce(state, event) {
    if (event.stream.kind !== "step" || !isFeedSourceStream(event.stream.id)) return state;
    const data = event.data as { action_id?: string };
    if (data.action_id === undefined) return state;
    const key = `${event.stream.id}#${data.action_id}`;
    if (event.type === "action.dispatched") {
      const { name } = event.data as EventData<"action.dispatched">;
      state.set(key, { step: event.stream.id, actionId: data.action_id, name });
    } else {
      state.delete(key);
    }
    return state;
  },
};

/**
 * Closes the reads of feed sources an earlier process left open (dispatched, and cut off by a
 * crash before they ended) with `action.interrupted`, never run again: the feed reads its source
 * afresh when it next needs a value. Called when a session's feed engine starts, before it reads
 * anything, so no read of this process is among them. Nothing is left unaccounted for in the log.
 */
export async function closeInterruptedFeedReads(
  store: EventStore,
  continuity: string,
): Promise<void> {
  const open = await store.fold(
    { continuity, types: ["action.dispatched", ...ACTION_ENDS] },
    openReads,
  );
  for (const read of open.values()) {
    await store.append({
      continuity,
      stream: { kind: "step", id: read.step },
      type: "action.interrupted",
      data: {
        action_id: read.actionId,
        name: read.name,
        dispatched: true,
        rerun: false,
        reason:
          "a restart cut this feed read off; it is not run again, and the feed reads its source afresh when it next needs a value",
      },
    });
  }
}
