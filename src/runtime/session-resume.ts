import { emptyUsage, toUsageData } from "../providers/index.js";
import type { ThreadRunResult } from "./agent-loop-types.js";
import type { ContinuitySession } from "./continuity-session.js";
import { recoverRun } from "./recovery.js";
import { closeInterruptedChild, startRecovery } from "./recovery-start.js";
import { sessionToolExecutor } from "./session-executors.js";
import { interruptTasks } from "./task-recovery.js";

/**
 * Resumes a continuity from its log alone (after a crash, or when another process's lease
 * lapsed): folds its state again, logs `recovery.started` when anything was left open, ends the
 * tasks, hook actions and summaries a crash cut off (after taking its sources up again:
 * `SessionSources.takeUp`), recovers each open run (interrupted-action semantics,
 * `recoverRun`) and goes on with it, closes child threads cut off with their parent, then runs
 * the turns left waiting. Resolves with the results of the runs it ran.
 */
export async function resumeSession(session: ContinuitySession): Promise<ThreadRunResult[]> {
  const { options, runs } = session.shared;
  const { store } = options;
  const { continuity } = session;
  const takingUp = !session.takenUp;
  session.takenUp = true;
  session.state = undefined;
  const state = await session.loadState();
  const results: ThreadRunResult[] = [];
  const tasks = [...state.openTasks.keys()].filter((stream) => !session.tasks.running(stream));
  const { driver, worker } = session;
  // The restart and what it found open are logged before anything is recovered; a cut-off
  // handoff is done again by the next step, into the same continuation id.
  await startRecovery({
    store,
    continuity,
    state,
    takingUp,
    tasks,
    hookActions: driver.interruptedHookActions(),
    summaries: worker.interrupted(),
  });
  // After the restart is logged (replay re-enacts it there): the sources start reading again.
  await session.sources?.takeUp();
  await interruptTasks(store, continuity, state, tasks);
  await driver.recoverHookActions();
  // Every started summary gets an end before a run goes on (its next handoff asks again).
  await worker.recover();
  for (const thread of state.threads.values()) {
    if (!thread.openRun) continue;
    if (thread.parent) {
      await closeInterruptedChild(store, continuity, thread.id);
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
