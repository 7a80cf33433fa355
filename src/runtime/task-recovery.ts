import type { EventStore } from "../log/index.js";
import type { ContinuityState } from "./continuity-state.js";

/**
 * Surfaces the tasks a crash cut off: every task stream of `streams` (open in `state`) gets
 * `action.interrupted` (`dispatched: true`, `rerun: false`) and leaves `state.openTasks`.
 *
 * Contract: a task is never run again here, idempotent tool or not: nobody waits on a task's
 * result, so a re-run would be a side effect no step asked for. Pass only streams of tasks no
 * live runtime runs (see `TaskSet.running`). Writes nothing for an empty list.
 */
export async function interruptTasks(
  store: EventStore,
  continuity: string,
  state: ContinuityState,
  streams: readonly string[],
): Promise<void> {
  for (const stream of streams) {
    const task = state.openTasks.get(stream);
    if (!task) continue;
    await store.append({
      continuity,
      stream: { kind: "task", id: stream },
      type: "action.interrupted",
      data: {
        action_id: task.actionId,
        name: task.name,
        dispatched: true,
        rerun: false,
        reason:
          "a restart cut this task off after it was dispatched; tasks are not run again (it may have had its effect). Ask again if it is still needed",
      },
    });
    state.openTasks.delete(stream);
  }
}
