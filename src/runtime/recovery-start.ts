import type { EventStore } from "../log/index.js";
import { emptyUsage, toUsageData } from "../providers/index.js";
import type { ContinuityState } from "./continuity-state.js";

/** What `startRecovery` needs. */
export interface RecoveryStartOptions {
  store: EventStore;
  continuity: string;
  /** The continuity's state, folded from its log by the resuming runtime. */
  state: ContinuityState;
  /** This runtime takes the continuity up for the first time (it has not run or resumed it). */
  takingUp: boolean;
  /** Task streams cut off (open in `state`, run by no live runtime). */
  tasks: readonly string[];
  /** Hook firings whose outcome the log lacks (`ContinuityDriver.interruptedHookActions`). */
  hookActions: readonly string[];
  /** Summary jobs started and never ended, run by no live runtime (`SummaryWorker.interrupted`). */
  summaries: readonly string[];
}

/**
 * Decides whether a resume is a recovery, and logs it (`recovery.started`) before anything is
 * recovered. It is one when a run, a handoff, a task, a hook action or a summary was left open, and also
 * whenever a runtime takes up a continuity that another runtime ran (the log holds a thread),
 * even with nothing left open: what that runtime had decided and not logged yet (a handoff or a
 * summary's pre-compute after a run had completed, a hook's firing, the hooks' edge state) ended
 * with it, and this one goes on from the log alone. Replay restarts its runtime at every
 * `recovery.started`, so it re-enacts the restart where the original's was.
 *
 * Returns the threads with an open run or a cut-off handoff (`open_runs`). Writes nothing when
 * it is not a recovery (a first resume of a continuity no runtime ran, a resume by the runtime
 * that runs it).
 */
export async function startRecovery(options: RecoveryStartOptions): Promise<string[]> {
  const { state, tasks, summaries } = options;
  const open = [...state.threads.values()]
    .filter((thread) => thread.openRun || thread.pendingHandoff)
    .map((thread) => thread.id);
  const restart = options.takingUp && state.threads.size > 0;
  const leftOpen =
    open.length > 0 || tasks.length > 0 || options.hookActions.length > 0 || summaries.length > 0;
  if (restart || leftOpen) {
    await options.store.append({
      continuity: options.continuity,
      type: "recovery.started",
      data: {
        open_runs: open,
        waiting_turns: state.waitingTurns.length,
        ...(tasks.length > 0 ? { open_tasks: tasks } : {}),
        ...(summaries.length > 0 ? { open_summaries: summaries } : {}),
      },
    });
  }
  return open;
}

/**
 * Ends a child thread (an `agent` action's, a summarizer's) a restart cut off: its run
 * `cancelled` with `run.interrupted`, then `thread.failed`. Its parent's action is recovered as
 * interrupted like any other; the child is never run again.
 */
export async function closeInterruptedChild(
  store: EventStore,
  continuity: string,
  thread: string,
): Promise<void> {
  const stream = { kind: "thread" as const, id: thread };
  const error = {
    code: "run.interrupted",
    message: "a restart cut this child agent off; its parent action is reported as interrupted",
  };
  await store.append({
    continuity,
    stream,
    type: "run.completed",
    data: { status: "cancelled", steps: 0, error, usage: toUsageData(emptyUsage()), cost_usd: 0 },
  });
  await store.append({ continuity, stream, type: "thread.failed", data: error });
}
