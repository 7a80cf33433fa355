import {
  applyContinuityEvent,
  type ContinuityState,
  emptyContinuityState,
  type ThreadState,
} from "../runtime/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";

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
  /** For a continued thread: the handoff to the thread that took over (`thread.continued`). */
  continuation: ThreadHandoff | null;
  /** For a continuation: the thread it took over from (`thread.started.continuation_of`). */
  continuation_of: string | null;
  /** The first thread of its chain of continuations (itself when it continues none). */
  chain_root: string;
  /** For a continuation: what its context was seeded with (`handoff.seeded`). */
  seed: ThreadSeed | null;
  /** Handoffs of this thread put off because no summary could be made (`handoff.deferred`). */
  deferred_handoffs: number;
  /**
   * A summarizer or hook directive the runtime ran beside the conversation (a child thread named
   * `<thread>@<action>`), as opposed to the conversation's own threads and `agent` children.
   */
  worker: boolean;
  started_at: string;
  /** Summed over the thread's `step.completed` events. */
  tokens: { input: number; output: number };
}

/** How a thread handed its work on (the data of its `thread.continued`, `null` where absent). */
export interface ThreadHandoff {
  thread: string;
  reason: string;
  pressure_ratio: number | null;
  /** `summary`: seeded with the summary chain; `trailing-only`: the last resort without one. */
  mode: "summary" | "trailing-only" | null;
  /** The thread's context tokens before the handoff, and the continuation's seed after it. */
  tokens_before: number | null;
  tokens_after: number | null;
  summary_id: string | null;
  summary_tokens: number | null;
}

/** What a continuation started from (its `handoff.seeded`). */
export interface ThreadSeed {
  from: string;
  mode: "summary" | "trailing-only";
  /** Summaries of the chain it carries, and the trailing messages carried over. */
  summaries: number;
  trailing: number;
  tokens: { summary: number; trailing: number };
}

interface ThreadTally {
  startedAt: string;
  runs: { completed: number; total: number };
  tokens: { input: number; output: number };
  chainRoot: string;
  continuationOf: string | null;
  continuation?: ThreadHandoff;
  seed?: ThreadSeed;
  deferred: number;
}

/**
 * Folds a continuity's events (in seq order, one pass) into its threads in start order. Thread
 * identity, parents, step counts, open runs and endings come from the runtime's own fold
 * (`applyContinuityEvent`); this adds the start time, run counts, token use and continuations.
 */
export class ThreadRowsFold {
  private readonly state: ContinuityState = emptyContinuityState();
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
      const data = event.data as EventData<"thread.started">;
      this.tallies.set(id, {
        startedAt: event.ts,
        runs: { completed: 0, total: 0 },
        tokens: { input: 0, output: 0 },
        chainRoot: data.chain_root,
        continuationOf: data.continuation_of ?? null,
        deferred: 0,
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
        mode: data.mode ?? null,
        tokens_before: data.tokens_before ?? null,
        tokens_after: data.tokens_after ?? null,
        summary_id: data.summary_id ?? null,
        summary_tokens: data.summary_tokens ?? null,
      };
    } else if (event.type === "handoff.seeded") {
      const data = event.data as EventData<"handoff.seeded">;
      tally.seed = {
        from: data.from,
        mode: data.mode,
        summaries: data.summaries.length,
        trailing: data.trailing.length,
        tokens: { ...data.tokens },
      };
    } else if (event.type === "handoff.deferred") {
      tally.deferred += 1;
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
      continuation_of: tally?.continuationOf ?? null,
      chain_root: tally?.chainRoot ?? thread.id,
      seed: tally?.seed ?? null,
      deferred_handoffs: tally?.deferred ?? 0,
      worker: isWorkerThread(thread.id, thread.parent),
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
    case "thread.continued":
      return "continued";
    default:
      if (thread.openRun) return "running";
      return thread.stopped === "thread.cancelled" ? "cancelled" : "open";
  }
}

/**
 * True for a thread the runtime ran beside the conversation: a summarizer or a hook's directive,
 * named `<thread>@<job>` after the thread it serves (an `agent` child is named after the step
 * that spawned it, `<thread>:<step>@<action>`). Such threads are no part of the conversation.
 */
export function isWorkerThread(
  id: string,
  parent: { thread: string; action: string } | undefined | null,
): boolean {
  return parent != null && id === `${parent.thread}@${parent.action}`;
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
