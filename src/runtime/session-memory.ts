import type { EventStore } from "../log/index.js";
import type { MemoryRecaller, RecallRequest } from "../memory/index.js";
import type { EventData } from "../spec/index.js";

/**
 * The text and actor of the turn `id`, read from the log after `after` (a position the caller
 * knows is before it: the turn's seq minus one, or what a thread's history has read), or
 * `undefined` when the log has no such turn there.
 */
export async function turnInput(
  store: EventStore,
  continuity: string,
  id: string,
  after: number,
): Promise<{ text: string; actor?: string } | undefined> {
  for await (const event of store.read({ continuity, types: ["turn.added"], after })) {
    if (event.id !== id) continue;
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
