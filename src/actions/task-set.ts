import type { StepScheduler } from "./step-scheduler.js";
import { taskStreamId } from "./store-action-log.js";

/**
 * The tasks of one continuity: the `fire_and_forget` actions that outlive the step (and the run)
 * that dispatched them. Each step's scheduler is adopted when the step starts and let go once it
 * is idle (every task of it has its terminal event in the log).
 *
 * Contract: a task is never dropped. `settled()` waits until every adopted scheduler is idle;
 * `cancel(reason)` stops every task still running, each with `action.cancelled` on its own task
 * stream, and from then on cancels every task dispatched later (a background step still going),
 * so `cancel` followed by `settled` always ends. `running(stream)` says whether a task stream
 * belongs to a task alive here (recovery must not report it as interrupted); `runningStreams()`
 * lists them (what a close is about to cancel).
 */
export class TaskSet {
  readonly #steps = new Map<StepScheduler, string>();
  #cancelled: string | undefined;

  /** Takes the tasks of step `step` (its stream id) into the set. */
  adopt(step: string, scheduler: StepScheduler): void {
    this.#steps.set(scheduler, step);
    if (this.#cancelled !== undefined) void scheduler.cancelDetached(this.#cancelled);
    void scheduler.idle().then(() => this.#steps.delete(scheduler));
  }

  /** True while the task on stream `stream` (see `taskStreamId`) runs in this set. */
  running(stream: string): boolean {
    for (const [scheduler, step] of this.#steps) {
      for (const id of scheduler.runningTasks()) if (taskStreamId(step, id) === stream) return true;
    }
    return false;
  }

  /** The streams of the tasks running in this set, in the order they were dispatched. */
  runningStreams(): string[] {
    const streams: string[] = [];
    for (const [scheduler, step] of this.#steps) {
      for (const id of scheduler.runningTasks()) streams.push(taskStreamId(step, id));
    }
    return streams;
  }

  /** Resolves once every task adopted so far, and every one adopted while waiting, has ended. */
  async settled(): Promise<void> {
    while (this.#steps.size > 0) await Promise.all([...this.#steps.keys()].map((s) => s.idle()));
  }

  /** Cancels every task, now and later (`action.cancelled` with `reason`), and waits for them. */
  async cancel(reason: string): Promise<void> {
    this.#cancelled ??= reason;
    await Promise.all([...this.#steps.keys()].map((s) => s.cancelDetached(reason)));
    await this.settled();
  }
}
