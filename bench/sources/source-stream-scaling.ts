/**
 * Whether a source's stream length costs anything where it should not: on a SQLite continuity
 * whose file source has logged 1,000, 10,000 and 100,000 chunks (four realistic log lines each,
 * every 50 delivered by a turn a run took; written with `appendBatch`, see `fillStream`):
 *
 * - a handoff: `handOff` of a fresh thread of 4 delivery runs (each 50 new chunks, 3 tool steps
 *   and an answer), with a `SummaryWorker` whose summarizer answers at once (no model time), as
 *   bench/continuity/handoff-overhead.ts measures one; only `handOff` is timed;
 * - taking the continuity up: `readSourcesState` (the sources' fold), and a runtime's
 *   `resume` (its state, recovery, and the sources' take-up: their fold, the manifest
 *   reconciled, each runner started: `source.started` logged), with an adapter that reads
 *   nothing, so only the runtime's own work is timed.
 *
 * Each figure beside the 1,000-chunk one (target: ≤ 1.5× it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ContextMessage, createSummaryWorker, handOff } from "../../src/continuity/index.js";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { createScriptedProvider } from "../../src/providers/index.js";
import { createModelCatalogue } from "../../src/providers/models/index.js";
import { createTokenEstimator } from "../../src/providers/tokens/index.js";
import { catchUp, createAgentRuntime, ThreadHistory } from "../../src/runtime/index.js";
import {
  parseSourceManifest,
  readSourcesState,
  type SourceAdapter,
} from "../../src/sources/index.js";
import { BENCH_MODEL, ThreadWriter } from "../continuity/continuity-log.js";
import type { EngineSection, ResultRow } from "../report.js";
import { median } from "../stats.js";
import {
  DELIVERY_CHUNKS,
  deliveryRun,
  fillStream,
  STREAM_DEFINITION,
  type StreamWriter,
} from "./source-stream-log.js";

const CONTINUITY = "watch";
const SIZES = [1_000, 10_000, 100_000] as const;
/** Handoffs (one fresh thread each) per run, and take-ups per run. */
const HANDOFFS = 8;
const TAKE_UPS = 5;
const RUNS_PER_THREAD = 4;
const TOOL_STEPS = 3;
const SUMMARY = `## Data Stream\n\n${"- chunks read, nothing unusual beyond the known 503 burst.\n".repeat(20)}`;
const RUNTIME_MODEL = "claude-sonnet-4-5";

interface SizeResult {
  handoff: number;
  fold: number;
  takeUp: number;
}

/** An adapter whose sources read nothing and end when stopped: only the runtime is timed. */
const idle: SourceAdapter = (definition) => ({
  definition,
  run: (context) =>
    new Promise<void>((resolve) => {
      if (context.signal.aborted) resolve();
      context.signal.addEventListener("abort", () => resolve(), { once: true });
    }),
});

/** One take-up: a runtime with the stream's source resumes the continuity, then closes (untimed). */
async function takeUp(store: EventStore, workspace: string): Promise<number> {
  const runtime = createAgentRuntime({
    store,
    provider: createScriptedProvider({ model: RUNTIME_MODEL, script: [] }),
    agent: {
      directive: "watcher",
      instructions: "Watch the log.",
      model: RUNTIME_MODEL,
      limits: {},
      permits: () => true,
      tools: [],
    },
    sources: {
      manifest: parseSourceManifest({ sources: [STREAM_DEFINITION] }),
      access: { workspace, allowPaths: [], allowHosts: [], shell: false },
      adapters: { file: idle },
    },
  });
  const started = performance.now();
  await runtime.resume(CONTINUITY);
  const ms = performance.now() - started;
  await runtime.close();
  return ms;
}

/** Times `handOff` of fresh threads of delivery runs, on from where `stream` stands. */
class Handoffs {
  readonly #store: EventStore;
  readonly #stream: StreamWriter;
  readonly #estimator = createTokenEstimator({ catalogue: createModelCatalogue() });
  readonly #worker;
  #threads = 0;

  constructor(store: EventStore, stream: StreamWriter) {
    this.#store = store;
    this.#stream = stream;
    this.#worker = createSummaryWorker({
      store,
      continuity: CONTINUITY,
      summarize: () => Promise.resolve(SUMMARY),
      countTokens: (text) => this.#estimator.count(BENCH_MODEL, text),
    });
  }

  /** One handoff of a fresh thread; only `handOff` is timed. */
  async once(): Promise<number> {
    const writer = new ThreadWriter(CONTINUITY, `current${++this.#threads}`);
    const events = [writer.started()];
    for (let run = 0; run < RUNS_PER_THREAD; run++) {
      events.push(...this.#stream.chunks(DELIVERY_CHUNKS));
      events.push(...deliveryRun(this.#stream, writer, TOOL_STEPS));
    }
    const [first] = await this.#store.appendBatch(events);
    const history = new ThreadHistory(writer.thread, { after: first!.seq - 1 });
    await catchUp(this.#store, CONTINUITY, history);
    const empty = this.#estimator.raw(BENCH_MODEL, { messages: [] });
    const cost = (entry: ContextMessage) =>
      this.#estimator.raw(BENCH_MODEL, { messages: [entry.message] }) - empty;
    const started = performance.now();
    const result = await handOff({
      store: this.#store,
      continuity: CONTINUITY,
      thread: writer.thread,
      directive: "watcher",
      model: BENCH_MODEL,
      view: history.view(),
      pressure: { tokensUsed: 150_000, maxTokens: 200_000, ratio: 0.75 },
      reason: "context pressure 0.75 ≥ 0.7",
      summarizer: { name: "stream_summarizer", maxSummaryTokens: 4000 },
      ceiling: 16_000,
      attempt: 1,
      maxAttempts: 3,
      fits: false,
      nextStep: RUNS_PER_THREAD * (TOOL_STEPS + 1),
      worker: this.#worker,
      cost,
      responseId: null,
      run: {
        completed: {
          status: "continued",
          steps: TOOL_STEPS + 1,
          usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
          cost_usd: 0,
        },
        started: { resumed: false, directive: "watcher", model: BENCH_MODEL, next_step: 0 },
      },
    });
    const ms = performance.now() - started;
    if (result.kind !== "continued" || result.mode !== "summary") {
      throw new Error(`the handoff ended ${result.kind}, not continued with a summary`);
    }
    await this.#checkPosition(first!.seq);
    return ms;
  }

  /** The seed after `seq` carries the source's position (the bench measures a real one). */
  async #checkPosition(seq: number): Promise<void> {
    for await (const event of this.#store.read({
      continuity: CONTINUITY,
      types: ["handoff.seeded"],
      after: seq,
    })) {
      const sources = (event.data as { sources?: { to_chunk: number }[] }).sources;
      if (sources?.[0]?.to_chunk === this.#stream.written) return;
      throw new Error(
        `the handoff's seed says ${JSON.stringify(sources)}, not the stream's position`,
      );
    }
    throw new Error("the handoff logged no seed");
  }
}

/** The medians at one stream length, on a fresh store. */
async function measureSize(
  dir: string,
  chunks: number,
  runs: number,
  progress: (line: string) => void,
): Promise<SizeResult> {
  const store = await openEventStore({ db: join(dir, `stream-${chunks}`), env: {} });
  try {
    const stream = await fillStream(store, CONTINUITY, chunks);
    progress(`sources: stream of ${chunks.toLocaleString("en-US")} chunks written`);
    const folds: number[] = [];
    const takeUps: number[] = [];
    // A first one of each, untimed: the code and the database's pages warm.
    await readSourcesState(store, CONTINUITY);
    await takeUp(store, dir);
    for (let run = 0; run < runs; run++) {
      const fold: number[] = [];
      const up: number[] = [];
      for (let i = 0; i < TAKE_UPS; i++) {
        const started = performance.now();
        await readSourcesState(store, CONTINUITY);
        fold.push(performance.now() - started);
        up.push(await takeUp(store, dir));
      }
      folds.push(median(fold));
      takeUps.push(median(up));
    }
    // After the take-ups: a handoff leaves its continuation's run open, which a resume recovers.
    const handoffs = new Handoffs(store, stream);
    await handoffs.once();
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      const one: number[] = [];
      for (let i = 0; i < HANDOFFS; i++) one.push(await handoffs.once());
      times.push(median(one));
    }
    progress(`sources: ${chunks.toLocaleString("en-US")} chunks measured`);
    return { handoff: median(times), fold: median(folds), takeUp: median(takeUps) };
  } finally {
    await store.close();
  }
}

/**
 * A handoff's time and a take-up's on a continuity whose source logged 1,000, 10,000 and 100,000
 * chunks, each beside the 1,000-chunk figure (target ≤ 1.5×).
 */
export async function measureSourceStreamScaling(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-stream-"));
  try {
    const results = new Map<number, SizeResult>();
    for (const size of SIZES) results.set(size, await measureSize(dir, size, runs, progress));
    const base = results.get(SIZES[0])!;
    const rows: ResultRow[] = [];
    const what: [keyof SizeResult, string][] = [
      ["handoff", "handOff"],
      ["fold", "readSourcesState"],
      ["takeUp", "take-up: runtime.resume with its sources"],
    ];
    for (const [key, label] of what) {
      for (const size of SIZES) {
        rows.push({
          measure: `${label}, ${size.toLocaleString("en-US")} chunks`,
          unit: "ms",
          spool: results.get(size)![key],
          ceiling: base[key],
          ...(size === SIZES[0] ? {} : { target: { maxRatio: 1.5 } }),
        });
      }
    }
    return {
      title: "Sources: handoff and take-up vs stream length",
      engine: "SQLite (strict durability)",
      baseline: "1,000 chunks",
      rows,
      notes: [
        `each chunk 4 realistic log lines, every ${DELIVERY_CHUNKS} delivered by a turn a run took; written with appendBatch`,
        `handOff: a fresh thread of ${RUNS_PER_THREAD} delivery runs (${TOOL_STEPS} tool steps and an answer each), the summarizer answering at once; ${HANDOFFS} handoffs per run, medians of ${runs} runs`,
        `readSourcesState: the sources' fold over the log; take-up: runtime.resume of the continuity with its file source (an adapter that reads nothing), ${TAKE_UPS} per run`,
        "both fold every source.chunk of the log from its start (each chunk read and parsed, lines included, to sum the source's counts and find the chunks not delivered): they grow with the stream, where a handoff does not",
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
