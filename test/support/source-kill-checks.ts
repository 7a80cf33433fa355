/**
 * The invariants of the sources kill test (`test/sources-kill.test.ts`), checked against the
 * whole log of its continuity once the last child finished: what each source logged, and what
 * the delivery turns gave the agent.
 */
import { isDeepStrictEqual } from "node:util";
import type { EventStore } from "../../src/log/index.js";
import { readChunkLines } from "../../src/sources/index.js";
import type { EventData, SpoolEvent } from "../../src/spec/index.js";
import { type ExpectedLine, linesProblem } from "./rotating-log.js";

/** What `checkSourceKillLog` found, and how much it looked at. */
export interface SourceKillFindings {
  problems: string[];
  appChunks: number;
  counterChunks: number;
  counterRuns: number;
  deliveries: number;
  /** Delivery turns a kill cut off before their run started, run by a later child. */
  carriedOver: number;
}

interface Chunk {
  n: number;
  lines: string[];
  cursor: unknown;
  channel: string | undefined;
}

/**
 * Checks the log of the kill test: the chunks of `app-log` hold `expected`, in order, each line
 * once; each run of `counter` logged `cmd <pid> 1`, `cmd <pid> 2`, … of one pid, none twice or
 * skipped, each run a new pid; each source's chunks are 1..N with no gap; the delivery turns
 * (actor `source:<id>` or `sources`, origin `source`) cover each source's chunks once, in order,
 * up to the last, each with the cursor logged after its last chunk; every delivery turn was taken
 * by a run.
 */
export async function checkSourceKillLog(
  store: EventStore,
  events: readonly SpoolEvent[],
  expected: readonly ExpectedLine[],
): Promise<SourceKillFindings> {
  const problems: string[] = [];
  const chunks = new Map<string, Chunk[]>();
  for (const event of events) {
    if (event.type !== "source.chunk") continue;
    const data = event.data as EventData<"source.chunk">;
    const list = chunks.get(data.source_id) ?? [];
    list.push({
      n: data.n,
      lines: await readChunkLines(store, event),
      cursor: data.cursor,
      channel: data.channel,
    });
    chunks.set(data.source_id, list);
  }
  for (const [id, list] of chunks) {
    const gap = list.findIndex((chunk, index) => chunk.n !== index + 1);
    if (gap >= 0) problems.push(`${id}: chunk ${gap + 1} is numbered ${list[gap]!.n}`);
  }
  const app = chunks.get("app-log") ?? [];
  const appProblem = linesProblem(
    app.flatMap((chunk) => chunk.lines),
    expected,
  );
  if (appProblem) problems.push(`app-log: ${appProblem}`);
  const counter = chunks.get("counter") ?? [];
  const runs = counterProblems(counter, problems);
  const deliveries = deliveryProblems(events, chunks, problems);
  return {
    carriedOver: carriedOver(events),
    problems,
    appChunks: app.length,
    counterChunks: counter.length,
    counterRuns: runs,
    deliveries,
  };
}

/** Checks the command's runs (see `checkSourceKillLog`); returns how many runs logged lines. */
function counterProblems(chunks: readonly Chunk[], problems: string[]): number {
  let run = 0;
  let pid = "";
  let next = 1;
  let runs = 0;
  const pids = new Set<string>();
  for (const chunk of chunks) {
    const at = (chunk.cursor as { run?: unknown }).run;
    if (typeof at !== "number" || at < run) {
      problems.push(`counter: chunk ${chunk.n} has run ${String(at)} after run ${run}`);
      return runs;
    }
    if (chunk.channel !== "stdout") problems.push(`counter: chunk ${chunk.n} is ${chunk.channel}`);
    for (const line of chunk.lines) {
      const match = /^cmd (\d+) (\d+)$/.exec(line);
      if (!match) {
        problems.push(`counter: chunk ${chunk.n} holds ${JSON.stringify(line)}`);
        return runs;
      }
      if (at !== run) {
        run = at;
        pid = match[1]!;
        next = 1;
        runs += 1;
        if (pids.has(pid)) problems.push(`counter: run ${run} has the pid of an earlier run`);
        pids.add(pid);
      }
      if (match[1] !== pid || Number(match[2]) !== next) {
        problems.push(
          `counter: run ${run} logged ${JSON.stringify(line)} where cmd ${pid} ${next} was due (chunk ${chunk.n})`,
        );
        return runs;
      }
      next += 1;
    }
  }
  return runs;
}

/** Delivery turns with a `recovery.started` between their append and their run's start. */
function carriedOver(events: readonly SpoolEvent[]): number {
  const appended = new Set<string>();
  const cut = new Set<string>();
  let count = 0;
  for (const event of events) {
    if (event.type === "turn.added" && (event.data as EventData<"turn.added">).sources) {
      appended.add(event.id);
    } else if (event.type === "recovery.started") {
      for (const turn of appended) cut.add(turn);
    } else if (event.type === "run.started") {
      const turn = (event.data as EventData<"run.started">).turn;
      if (turn === undefined || !appended.delete(turn)) continue;
      if (cut.has(turn)) count += 1;
    }
  }
  return count;
}

/** Checks the delivery turns (see `checkSourceKillLog`); returns how many there are. */
function deliveryProblems(
  events: readonly SpoolEvent[],
  chunks: ReadonlyMap<string, readonly Chunk[]>,
  problems: string[],
): number {
  const delivered = new Map<string, number>();
  const taken = new Set<string>();
  for (const event of events) {
    if (event.type === "run.started") {
      const turn = (event.data as EventData<"run.started">).turn;
      if (turn !== undefined) taken.add(turn);
    }
  }
  let count = 0;
  for (const event of events) {
    if (event.type !== "turn.added") continue;
    const data = event.data as EventData<"turn.added">;
    if (!data.sources) continue;
    count += 1;
    if (event.origin !== "source" || !/^(source:|sources$)/.test(event.actor ?? "")) {
      problems.push(`delivery ${event.id} is from ${event.actor} (${event.origin})`);
    }
    if (!taken.has(event.id)) problems.push(`delivery ${event.id} was never run`);
    for (const entry of data.sources) {
      const last = delivered.get(entry.source_id) ?? 0;
      if (entry.from_chunk !== last + 1 || entry.to_chunk < entry.from_chunk) {
        problems.push(
          `${entry.source_id}: delivery ${event.id} covers ${entry.from_chunk}–${entry.to_chunk} after ${last}`,
        );
      }
      const logged = chunks.get(entry.source_id)?.[entry.to_chunk - 1];
      if (!logged || !isDeepStrictEqual(logged.cursor, entry.cursor)) {
        problems.push(
          `${entry.source_id}: delivery ${event.id} has another cursor than chunk ${entry.to_chunk}`,
        );
      }
      delivered.set(entry.source_id, Math.max(last, entry.to_chunk));
    }
  }
  for (const [id, list] of chunks) {
    const last = delivered.get(id) ?? 0;
    if (last !== list.length) problems.push(`${id}: ${list.length} chunks, ${last} delivered`);
  }
  return count;
}
