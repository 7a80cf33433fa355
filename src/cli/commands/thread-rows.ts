import {
  applyContinuityEvent,
  type ContinuityState,
  type ThreadState,
} from "../../runtime/continuity-state.js";
import type { EventData, SpoolEvent } from "../../spec/index.js";

/** Where a thread stands: still taking turns, or ended one way or another. */
export type ThreadStatus = "running" | "open" | "completed" | "failed" | "cancelled" | "continued";

/** One thread of a continuity, as `spool threads` shows it. */
export interface ThreadRow {
  id: string;
  directive: string;
  model: string | null;
  /** The thread and `agent` action that started a child thread; `null` for a foreground one. */
  parent: { thread: string; step: string; action: string; depth: number } | null;
  /** Model steps taken (the index its next step takes). */
  steps: number;
  /** Runs that ended `completed`, of all runs started (a run resumed after a crash counts once). */
  runs: { completed: number; total: number };
  /** `running` while a run is open (also one a crash interrupted), `open` between runs. */
  status: ThreadStatus;
  /** For a continued thread: the thread that took over, why, and the context pressure then. */
  continuation: { thread: string; reason: string; pressure_ratio: number | null } | null;
  started_at: string;
  /** Summed over the thread's `step.completed` events. */
  tokens: { input: number; output: number };
}

interface ThreadTally {
  startedAt: string;
  runs: { completed: number; total: number };
  tokens: { input: number; output: number };
  continuation?: ThreadRow["continuation"];
}

/**
 * Folds a continuity's events (in seq order, one pass) into its threads in start order. Thread
 * identity, parents, step counts, open runs and endings come from the runtime's own fold
 * (`applyContinuityEvent`); this adds the start time, run counts, token use and continuations.
 */
export class ThreadRowsFold {
  private readonly state: ContinuityState = { threads: new Map(), waitingTurns: [] };
  private readonly tallies = new Map<string, ThreadTally>();

  /** Takes the next event of the continuity. */
  push(event: SpoolEvent): void {
    applyContinuityEvent(this.state, event);
    if (event.stream.kind === "thread") this.onThread(event);
    else if (event.type === "step.completed") {
      const data = event.data as EventData<"step.completed">;
      if (data.kind !== "model") return;
      const tally = this.tallies.get(data.thread);
      if (!tally) return;
      tally.tokens.input += data.usage.input_tokens;
      tally.tokens.output += data.usage.output_tokens;
    }
  }

  /** The threads seen so far, oldest start first. */
  rows(): ThreadRow[] {
    return [...this.state.threads.values()]
      .sort((a, b) => a.startSeq - b.startSeq)
      .map((thread) => this.row(thread));
  }

  private onThread(event: SpoolEvent): void {
    const id = event.stream.id;
    if (event.type === "thread.started") {
      this.tallies.set(id, {
        startedAt: event.ts,
        runs: { completed: 0, total: 0 },
        tokens: { input: 0, output: 0 },
      });
      return;
    }
    const tally = this.tallies.get(id);
    if (!tally) return;
    if (event.type === "run.started") {
      if (!(event.data as EventData<"run.started">).resumed) tally.runs.total += 1;
    } else if (event.type === "run.completed") {
      if ((event.data as EventData<"run.completed">).status === "completed") {
        tally.runs.completed += 1;
      }
    } else if (event.type === "thread.continued") {
      const data = event.data as EventData<"thread.continued">;
      tally.continuation = {
        thread: data.continuation,
        reason: data.reason,
        pressure_ratio: data.pressure_ratio ?? null,
      };
    }
  }

  private row(thread: ThreadState): ThreadRow {
    const tally = this.tallies.get(thread.id);
    return {
      id: thread.id,
      directive: thread.directive,
      model: thread.model ?? null,
      parent: thread.parent ? { ...thread.parent } : null,
      steps: thread.nextStep,
      runs: { ...(tally?.runs ?? { completed: 0, total: 0 }) },
      status: statusOf(thread),
      continuation: tally?.continuation ?? null,
      started_at: tally?.startedAt ?? "",
      tokens: { ...(tally?.tokens ?? { input: 0, output: 0 }) },
    };
  }
}

function statusOf(thread: ThreadState): ThreadStatus {
  switch (thread.ended) {
    case "thread.completed":
      return "completed";
    case "thread.failed":
      return "failed";
    case "thread.cancelled":
      return "cancelled";
    case "thread.continued":
      return "continued";
    default:
      return thread.openRun ? "running" : "open";
  }
}

const ULID = /[0-9A-HJKMNP-TV-Z]{26}/g;

/**
 * A thread id short enough for a table: each ULID in it is cut to `…` and its last 8 characters
 * (its random part, which tells threads apart), so `th-01JC3V…` stays recognisable and a child's
 * `th-…:0@c1` suffix is kept. Other ids longer than 24 characters keep their start and end.
 */
export function shortThreadId(id: string): string {
  const short = id.replace(ULID, (ulid) => `…${ulid.slice(-8)}`);
  if (Array.from(short).length <= 24) return short;
  const chars = Array.from(short);
  return `${chars.slice(0, 11).join("")}…${chars.slice(-12).join("")}`;
}
