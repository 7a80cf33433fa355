import type { EventStore } from "../log/index.js";
import type { ThreadRunResult } from "./agent-loop-types.js";
import type { ContinuityDriver } from "./continuity-driver.js";
import type { ThreadState } from "./continuity-state.js";

/** What `recordRunStop` needs. */
export interface RunStopOptions {
  store: EventStore;
  continuity: string;
  driver: ContinuityDriver;
  /** The foreground thread's directive (the hooks' payload names it). */
  directive: string;
  /** How the run ended (the thread it ended in, and its status). */
  result: Pick<ThreadRunResult, "thread" | "status">;
  /** The signal the run was given: its abort reason says why a cancelled run stopped. */
  signal?: AbortSignal;
  /** The runtime's record of the thread the run ended in; `stopped` is set on it. */
  thread?: ThreadState;
}

/**
 * Records how a foreground run that stopped short leaves its thread, after its `run.completed`:
 * a run that reached a limit **suspends** the thread (`thread.suspended`), a run stopped on
 * request (Ctrl-C, `runtime.cancel`, a turn that interrupts it, the runtime closing)
 * **cancels** it (`thread.cancelled`, with the abort's reason). Then fires the hooks that name
 * the event. Neither ends the thread: the next turn goes on in it (`recordThreadResumed`).
 * Writes nothing for a run that completed, failed or handed off.
 */
export async function recordRunStop(options: RunStopOptions): Promise<void> {
  const { store, continuity, driver, result } = options;
  const thread = result.thread;
  let type: "thread.suspended" | "thread.cancelled";
  let reason: string;
  if (result.status === "limit") {
    type = "thread.suspended";
    reason =
      "the run reached a limit of its directive (limit.reached says which); send a message to go on, or raise the limit in the directive's <limits>";
  } else if (result.status === "cancelled") {
    type = "thread.cancelled";
    reason = abortReason(options.signal);
  } else {
    return;
  }
  await store.append({
    continuity,
    stream: { kind: "thread", id: thread },
    type,
    data: { reason },
  });
  if (options.thread) options.thread.stopped = type;
  await driver.fire(type, { thread, directive: options.directive, reason }, thread);
}

/**
 * Before a run goes on in a thread a limit suspended or a cancellation stopped: records
 * `thread.resumed` and clears `stopped`. Writes nothing for a thread that was not stopped.
 */
export async function recordThreadResumed(
  store: EventStore,
  continuity: string,
  thread: ThreadState,
  turn: string,
): Promise<void> {
  if (thread.stopped === undefined) return;
  const was = thread.stopped === "thread.suspended" ? "suspended" : "cancelled";
  await store.append({
    continuity,
    stream: { kind: "thread", id: thread.id },
    type: "thread.resumed",
    data: { reason: `the turn ${turn} goes on in the thread its last run left ${was}` },
  });
  delete thread.stopped;
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.aborted ? signal.reason : undefined;
  if (typeof reason === "string" && reason.trim() !== "") return reason.slice(0, 2000);
  return "the run was cancelled";
}
