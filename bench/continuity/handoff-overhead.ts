/**
 * What a handoff costs beside its model time: `handOff` on a thread of 64 messages at the end of
 * a 100,000-event continuity on SQLite, with a `SummaryWorker` whose summarizer answers at once
 * with a fixed summary (no model). It logs `handoff.started`, the summary job
 * (`summary.started`, the summary's artifact, `summary.completed`) and the continuation in one
 * batch (`thread.started`, `handoff.seeded` with the trailing messages, `provider.cursor-rotated`,
 * `run.completed`, `thread.continued`, `run.started`). Baseline: the raw cost of one critical
 * `append` and one `appendBatch` of 5 events on the same store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ContextMessage, createSummaryWorker, handOff } from "../../src/continuity/index.js";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { createModelCatalogue } from "../../src/providers/models/index.js";
import { createTokenEstimator } from "../../src/providers/tokens/index.js";
import { catchUp, ThreadHistory } from "../../src/runtime/index.js";
import type { AnyNewEvent } from "../../src/spec/index.js";
import type { EngineSection } from "../report.js";
import { median } from "../stats.js";
import { turnAdded } from "../workload.js";
import {
  BENCH_MODEL,
  fillOlderThreads,
  ThreadWriter,
  writeCurrentThread,
} from "./continuity-log.js";

const EVENTS = 100_000;
const CONTINUITY = "bench";
/** Handoffs (one fresh thread each) per run. */
const HANDOFFS = 10;
const RUNS_PER_THREAD = 4;
const TOOL_STEPS = 7;
const SUMMARY = `## Progress\n\n${"- Read the module, changed the parser, ran the tests: all green.\n".repeat(20)}`;

/**
 * The median ms of a handoff without model time, beside one critical append plus one
 * five-event batch; target ≤ 20 ms.
 */
export async function measureHandoffOverhead(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-handoff-"));
  const store: EventStore = await openEventStore({ db: join(dir, "handoff"), env: {} });
  try {
    const filled = await fillOlderThreads(store, CONTINUITY, EVENTS);
    progress(`handoff overhead: ${filled.toLocaleString("en-US")} events written`);
    const estimator = createTokenEstimator({ catalogue: createModelCatalogue() });
    const empty = estimator.raw(BENCH_MODEL, { messages: [] });
    const cost = (entry: ContextMessage) =>
      estimator.raw(BENCH_MODEL, { messages: [entry.message] }) - empty;
    const worker = createSummaryWorker({
      store,
      continuity: CONTINUITY,
      summarize: () => Promise.resolve(SUMMARY),
      countTokens: (text) => estimator.count(BENCH_MODEL, text),
    });

    let threads = 0;
    let messages = 0;
    /** One handoff of a fresh thread; only `handOff` is timed. */
    const handoff = async (): Promise<number> => {
      const writer = new ThreadWriter(CONTINUITY, `h${++threads}`);
      const start = await writeCurrentThread(
        store,
        writer,
        CONTINUITY,
        RUNS_PER_THREAD,
        TOOL_STEPS,
      );
      const history = new ThreadHistory(writer.thread, { after: start - 1 });
      await catchUp(store, CONTINUITY, history);
      const view = history.view();
      messages = view.messages.length;
      const started = performance.now();
      const result = await handOff({
        store,
        continuity: CONTINUITY,
        thread: writer.thread,
        directive: "bench",
        model: BENCH_MODEL,
        view,
        pressure: { tokensUsed: 150_000, maxTokens: 200_000, ratio: 0.75 },
        reason: "context pressure 0.75 ≥ 0.7",
        summarizer: { name: "thread_summary", maxSummaryTokens: 4000 },
        ceiling: 16_000,
        attempt: 1,
        maxAttempts: 3,
        fits: false,
        nextStep: RUNS_PER_THREAD * (TOOL_STEPS + 1),
        worker,
        cost,
        responseId: null,
        run: {
          completed: {
            status: "continued",
            steps: 8,
            usage: {
              input_tokens: 0,
              output_tokens: 0,
              cache_read_tokens: 0,
              cache_write_tokens: 0,
            },
            cost_usd: 0,
          },
          started: {
            resumed: false,
            directive: "bench",
            model: BENCH_MODEL,
            next_step: 0,
          },
        },
      });
      const ms = performance.now() - started;
      if (result.kind !== "continued" || result.mode !== "summary") {
        throw new Error(`the handoff ended ${result.kind}, not continued with a summary`);
      }
      return ms;
    };
    /** The raw writes: one critical append, then a batch of 5 critical events. */
    const writes = async (): Promise<number> => {
      const batch: AnyNewEvent[] = Array.from({ length: 5 }, (_, i) => turnAdded(CONTINUITY, i));
      const started = performance.now();
      await store.append(turnAdded(CONTINUITY, 0));
      await store.appendBatch(batch);
      return performance.now() - started;
    };

    await handoff();
    await writes();
    const spool: number[] = [];
    const baseline: number[] = [];
    for (let run = 0; run < runs; run++) {
      progress(`handoff overhead: run ${run + 1}/${runs}`);
      const times: number[] = [];
      const raw: number[] = [];
      for (let i = 0; i < HANDOFFS; i++) {
        times.push(await handoff());
        raw.push(await writes());
      }
      spool.push(median(times));
      baseline.push(median(raw));
    }
    return {
      title: "Handoff overhead (no model time)",
      engine: "handOff + createSummaryWorker on SQLite (strict durability)",
      baseline: "1 append + 1 batch of 5",
      rows: [
        {
          measure: `handOff, ${messages} messages, ${EVENTS.toLocaleString("en-US")}-event continuity`,
          unit: "ms",
          spool: median(spool),
          ceiling: median(baseline),
          target: { maxValue: 20 },
        },
      ],
      notes: [
        `the summarizer resolves at once with a fixed ${SUMMARY.length}-character summary; a fresh thread per handoff (${RUNS_PER_THREAD} runs of ${TOOL_STEPS} tool steps and a final answer), its history built untimed; ${HANDOFFS} handoffs per run, medians of ${runs} runs`,
        "a handoff writes 3 critical appends (handoff.started, summary.started, summary.completed), the summary's artifact (a file write and sync) and one batch of 6 events (the seed carries every message: they fit the 16,000-token ceiling); the baseline is one append and one 5-event batch of `turn.added`, timed right after each handoff",
      ],
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
