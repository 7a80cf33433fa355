/**
 * Does a step's context compile cost depend on how long the continuity is? The same current
 * thread (4 runs of 7 tool steps: 64 messages, 2 pinned items) at the end of continuities of
 * 1,000 to 1,000,000 events on SQLite, each figure beside the 1k one:
 *
 * (a) warm step: one step's events are appended (untimed), then `catchUp` + `compileContext` +
 *     `recordBundle` (its manifest is stored: a file write and sync) on the thread's live history;
 * (b) cold thread open: `new ThreadHistory(thread, { after: threadStartSeq - 1 })` + `catchUp` +
 *     `compileContext`, every message counted afresh.
 *
 * How the logs are made: see `continuity-log.ts` (older threads of one run each, generated in
 * batches and written with `appendBatch` of 5,000 through the store's whole write path; about
 * 35,000 events/s on 2 cores, so the 1M log takes about half a minute).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ContextBundle,
  type ContextPolicy,
  compileContext,
  type DirectiveContext,
  recordBundle,
} from "../../src/continuity/index.js";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { createModelCatalogue } from "../../src/providers/models/index.js";
import { createTokenEstimator, type TokenEstimator } from "../../src/providers/tokens/index.js";
import { catchUp, ThreadHistory } from "../../src/runtime/index.js";
import type { EngineSection, ResultRow } from "../report.js";
import { median } from "../stats.js";
import {
  BENCH_MODEL,
  fillOlderThreads,
  ThreadWriter,
  writeCurrentThread,
} from "./continuity-log.js";

/** Events in the continuity, the current thread's included. */
const SIZES = [1_000, 10_000, 100_000, 1_000_000] as const;
/** The current thread: runs (one turn each) of tool steps. */
const RUNS = 4;
const TOOL_STEPS = 7;
/** Warm steps and cold opens timed per run. */
const WARM_STEPS = 20;
const COLD_OPENS = 5;
const CONTINUITY = "bench";
const THREAD = "current";

const DIRECTIVE: DirectiveContext = {
  name: "bench",
  system: `You are a coding agent. ${"Follow the repository's conventions and explain what you change. ".repeat(30)}`,
  tools: [
    {
      name: "fs_read",
      description: "Reads a file of the workspace.",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  ],
};
const POLICY: ContextPolicy = { model: BENCH_MODEL, budget: 32_000, maxOutputTokens: 4096 };

/** One size's medians (ms): the warm step and the cold open, and the warm step's parts. */
interface SizeFigures {
  events: number;
  fillMs: number;
  warm: number;
  cold: number;
  parts: { catchUp: number; compile: number; record: number };
  messages: number;
}

const now = () => performance.now();

/** A filled continuity, its current thread's live history, and each run's medians so far. */
interface Prepared {
  store: EventStore;
  writer: ThreadWriter;
  history: ThreadHistory;
  known: Set<string>;
  estimator: TokenEstimator;
  open: () => Promise<{ history: ThreadHistory; bundle: ContextBundle }>;
  events: number;
  fillMs: number;
  messages: number;
  runs: { warm: number; cold: number; catchUp: number; compile: number; record: number }[];
}

/** Fills a store of `size` events under `dir` and warms its thread up (JIT, statements, files). */
async function prepare(
  dir: string,
  size: number,
  progress: (line: string) => void,
): Promise<Prepared> {
  const store: EventStore = await openEventStore({ db: join(dir, `c${size}`), env: {} });
  const writer = new ThreadWriter(CONTINUITY, THREAD);
  // The current thread's events, counted on a scratch writer so the older ones fill the rest.
  const probe = new ThreadWriter(CONTINUITY, THREAD);
  let current = 3;
  for (let run = 0; run < RUNS; run++) current += probe.run(run, TOOL_STEPS).length;
  const filled = now();
  await fillOlderThreads(store, CONTINUITY, size - current);
  const threadStart = await writeCurrentThread(store, writer, CONTINUITY, RUNS, TOOL_STEPS);
  const fillMs = now() - filled;
  const events = (await store.continuity(CONTINUITY))?.events ?? 0;
  progress(
    `continuity compile: ${events.toLocaleString("en-US")} events in ${(fillMs / 1000).toFixed(1)} s`,
  );
  const estimator = createTokenEstimator({ catalogue: createModelCatalogue() });
  const open = async () => {
    const history = new ThreadHistory(THREAD, { after: threadStart - 1 });
    await catchUp(store, CONTINUITY, history);
    return { history, bundle: compileContext(history.view(), DIRECTIVE, POLICY, estimator) };
  };
  const { history, bundle } = await open();
  const known = new Set<string>();
  await recordBundle(store.artifacts, bundle, known);
  return {
    store,
    writer,
    history,
    known,
    estimator,
    open,
    events,
    fillMs,
    messages: bundle.messages,
    runs: [],
  };
}

/** One run on a prepared continuity: its cold opens, then its warm steps; keeps the medians. */
async function measureRun(prepared: Prepared): Promise<void> {
  const { store, writer, history, known, estimator } = prepared;
  const opens: number[] = [];
  for (let i = 0; i < COLD_OPENS; i++) {
    const started = now();
    await prepared.open();
    opens.push(now() - started);
  }
  const steps: number[] = [];
  const split = { catchUp: [] as number[], compile: [] as number[], record: [] as number[] };
  for (let i = 0; i < WARM_STEPS; i++) {
    await store.appendBatch(writer.step(false));
    const t0 = now();
    await catchUp(store, CONTINUITY, history);
    const t1 = now();
    const compiled = compileContext(history.view(), DIRECTIVE, POLICY, estimator);
    const t2 = now();
    await recordBundle(store.artifacts, compiled, known);
    const t3 = now();
    steps.push(t3 - t0);
    split.catchUp.push(t1 - t0);
    split.compile.push(t2 - t1);
    split.record.push(t3 - t2);
  }
  prepared.runs.push({
    warm: median(steps),
    cold: median(opens),
    catchUp: median(split.catchUp),
    compile: median(split.compile),
    record: median(split.record),
  });
}

function figuresOf(prepared: Prepared): SizeFigures {
  const at = (pick: (run: Prepared["runs"][number]) => number) => median(prepared.runs.map(pick));
  return {
    events: prepared.events,
    fillMs: prepared.fillMs,
    warm: at((run) => run.warm),
    cold: at((run) => run.cold),
    parts: {
      catchUp: at((run) => run.catchUp),
      compile: at((run) => run.compile),
      record: at((run) => run.record),
    },
    messages: prepared.messages,
  };
}

/**
 * Per-step compile time at each continuity size, beside the 1k figure (ratio = size ÷ 1k); the
 * target is the 1M figure within 2× of the 1k one. Medians of `runs` runs, each the median of
 * its steps.
 */
export async function measureCompileScaling(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-continuity-"));
  const prepared: Prepared[] = [];
  try {
    for (const size of SIZES) prepared.push(await prepare(dir, size, progress));
    // Every run measures each size in turn, so a busy moment of the machine touches them all.
    for (let run = 0; run < runs; run++) {
      progress(`continuity compile: run ${run + 1}/${runs}`);
      for (const continuity of prepared) await measureRun(continuity);
    }
    const figures = prepared.map(figuresOf);
    const base = figures[0]!;
    const largest = SIZES.at(-1)!;
    const label = (events: number) =>
      events >= 1_000_000 ? `${events / 1_000_000}M` : `${Math.round(events / 1000)}k`;
    const rows: ResultRow[] = [];
    for (const [kind, pick] of [
      ["warm step (catchUp + compile + record)", (f: SizeFigures) => f.warm],
      ["cold thread open (history + catchUp + compile)", (f: SizeFigures) => f.cold],
    ] as const) {
      figures.forEach((found, k) => {
        rows.push({
          measure: `${kind}, ${label(SIZES[k]!)} events`,
          unit: "ms",
          spool: pick(found),
          ceiling: pick(base),
          ...(SIZES[k] === largest ? { target: { maxValue: 2 * pick(base) } } : {}),
        });
      });
    }
    const ms = (value: number) => value.toFixed(3);
    return {
      title: "Context compile vs continuity length",
      engine: "ThreadHistory + compileContext + recordBundle on SQLite (strict durability)",
      baseline: "1k events",
      rows,
      notes: [
        `the current thread: ${RUNS} runs of ${TOOL_STEPS} tool steps and a final answer (${base.messages} messages, 2 pinned items) after older threads of one 4-step run each; a step = step.started, message.completed (300 characters of text and a native tool call), action.dispatched, action.succeeded, step.completed, loop.decided; budget ${POLICY.budget.toLocaleString("en-US")} tokens (every message fits)`,
        `warm step: the step's events are appended untimed, then catchUp + compileContext + recordBundle (with a \`known\` set: only the manifest is stored, a file write and sync) are timed; ${WARM_STEPS} steps per run; cold open: ${COLD_OPENS} per run, before the warm steps; each run takes the sizes in turn; medians of ${runs} runs`,
        `warm step parts (catchUp / compile / record, ms): ${figures.map((f, k) => `${label(SIZES[k]!)} ${ms(f.parts.catchUp)} / ${ms(f.parts.compile)} / ${ms(f.parts.record)}`).join("; ")}`,
        `the target row: the 1M figure ≤ 2× the 1k one; fill (appendBatch of 5,000 generated events): ${figures.map((f) => `${f.events.toLocaleString("en-US")} events in ${(f.fillMs / 1000).toFixed(1)} s`).join(", ")}`,
      ],
    };
  } finally {
    for (const continuity of prepared) await continuity.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
