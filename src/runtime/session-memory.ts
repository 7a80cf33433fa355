import type { EventStore } from "../log/index.js";
import type { MemoryRecaller, RecallRequest } from "../memory/index.js";
import type { EventData } from "../spec/index.js";

/** The text and actor of the turn logged at `seq`, or `undefined` when there is none there. */
export async function turnAt(
  store: EventStore,
  continuity: string,
  seq: number | undefined,
): Promise<{ text: string; actor?: string } | undefined> {
  if (seq === undefined) return undefined;
  for await (const event of store.read({
    continuity,
    types: ["turn.added"],
    after: seq - 1,
    until: seq,
  })) {
    const data = event.data as EventData<"turn.added">;
    return { text: data.text, ...(event.actor ? { actor: event.actor } : {}) };
  }
  return undefined;
}

/**
 * Asks `recaller` for memory for a thread and logs its choice as `memory.recalled` on the thread,
 * before the thread's next compile reads the log (its history folds the event into the view).
 * Nothing is logged when it gives nothing. A recaller that fails (the index unreachable) leaves the
 * thread without memory: memory is an aid, and never stops a run.
 */
export async function recordRecall(
  store: EventStore,
  recaller: MemoryRecaller | undefined,
  request: RecallRequest,
): Promise<void> {
  if (!recaller) return;
  let data: EventData<"memory.recalled"> | undefined;
  try {
    data = await recaller.recall(request);
  } catch {
    return;
  }
  if (!data) return;
  await store.append({
    continuity: request.continuity,
    stream: { kind: "thread", id: request.thread },
    type: "memory.recalled",
    data,
  });
}
