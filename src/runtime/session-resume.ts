import { emptyUsage, toUsageData } from "../providers/index.js";
import type { ThreadRunResult } from "./agent-loop.js";
import type { ContinuitySession } from "./continuity-session.js";
import { recoverRun } from "./recovery.js";
import { sessionToolExecutor } from "./session-executors.js";
import { interruptTasks } from "./task-recovery.js";

/**
 * Resumes a continuity from its log alone (after a crash, or when another process's lease
 * lapsed): folds its state again, logs `recovery.started` when anything was left open, ends the
 * tasks and hook actions a crash cut off, recovers each open run (interrupted-action semantics,
 * `recoverRun`) and goes on with it, closes child threads cut off with their parent, then runs
 * the turns left waiting. Resolves with the results of the runs it ran.
 */
export async function resumeSession(session: ContinuitySession): Promise<ThreadRunResult[]> {
  const { options, runs } = session.shared;
  const { store } = options;
  const { continuity } = session;
  session.state = undefined;
  const state = await session.loadState();
  const results: ThreadRunResult[] = [];
  // Runs a crash cut off, and handoffs it cut off (the next step hands off again, into the
  // same continuation id: never a second continuation).
  const open = [...state.threads.values()]
    .filter((thread) => thread.openRun || thread.pendingHandoff)
    .map((thread) => thread.id);
  const tasks = [...state.openTasks.keys()].filter((stream) => !session.tasks.running(stream));
  const { driver } = session;
  if (open.length > 0 || tasks.length > 0 || driver.interruptedHookActions().length > 0) {
    await store.append({
      continuity,
      type: "recovery.started",
      data: {
        open_runs: open,
        waiting_turns: state.waitingTurns.length,
        ...(tasks.length > 0 ? { open_tasks: tasks } : {}),
      },
    });
  }
  await interruptTasks(store, continuity, state, tasks);
  await driver.recoverHookActions();
  for (const thread of state.threads.values()) {
    if (!thread.openRun) continue;
    if (thread.parent) {
      await closeInterruptedChild(session, thread.id);
      delete thread.openRun;
      continue;
    }
    if (thread.id !== state.foreground) continue;
    const recovery = await recoverRun({
      store,
      continuity,
      thread: thread.id,
      since: thread.openRun.seq,
      tools: options.agent.tools,
      // A re-run takes the model's action path too: the serial queue and replay's intercept.
      execute: (tool, call) =>
        sessionToolExecutor(session, thread.id, call.step).execute({
          actionId: call.actionId,
          type: "tool",
          name: tool.name,
          parameters: call.parameters,
          attempt: call.attempt,
          signal: call.signal,
          progress: () => {},
        }),
    });
    delete thread.openRun;
    thread.nextStep = recovery.nextStep;
    if (recovery.next === "end") {
      const status = recovery.status ?? "completed";
      await store.append({
        continuity,
        stream: { kind: "thread", id: thread.id },
        type: "run.completed",
        data: { status, steps: 0, usage: toUsageData(emptyUsage()), cost_usd: 0 },
      });
      await session.stopped({ thread: thread.id, status });
      continue;
    }
    results.push(
      await session.runForeground({
        thread: thread.id,
        nextStep: recovery.nextStep,
        resumed: true,
      }),
    );
  }
  for (const turn of [...state.waitingTurns]) {
    if (runs.has(turn)) continue; // the follower queued it already: it runs after this
    const run = session.runTurnNow(turn);
    runs.set(turn, run);
    results.push(await run);
  }
  return results;
}

/** Closes a child thread a restart cut off: its parent's `agent` action is interrupted. */
async function closeInterruptedChild(session: ContinuitySession, thread: string): Promise<void> {
  const { store } = session.shared.options;
  const stream = { kind: "thread" as const, id: thread };
  const error = {
    code: "run.interrupted",
    message: "a restart cut this child agent off; its parent action is reported as interrupted",
  };
  await store.append({
    continuity: session.continuity,
    stream,
    type: "run.completed",
    data: { status: "cancelled", steps: 0, error, usage: toUsageData(emptyUsage()), cost_usd: 0 },
  });
  await store.append({
    continuity: session.continuity,
    stream,
    type: "thread.failed",
    data: error,
  });
}
