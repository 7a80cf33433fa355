import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ActionExecutor,
  type ActionLog,
  createMemoryActionLog,
  createStepScheduler,
  createStoreActionLog,
  createVariableStore,
} from "../../src/actions/index.js";
import type { EventStore } from "../../src/log/index.js";
import { openEventStore } from "../../src/log/open-store.js";
import { createProtocolParser } from "../../src/protocol/index.js";
import type { EngineSection, ResultRow } from "../report.js";
import { type LatencySummary, median, summarizeLatencies } from "../stats.js";

/** Actions timed per run, after the warm-up ones. */
const SAMPLES = { memory: 5000, sqlite: 1000 } as const;
const WARMUP = 200;

/** The `<action>` of sample `i`, cut before its close tag: the timed push is `</action>`. */
function actionHead(i: number): string {
  const body = JSON.stringify({
    name: "lookup",
    parameters: { query: `item ${i}`, limit: 10, nested: { ref: "$last" } },
    output_key: "last",
  });
  return `<action type="tool" mode="async" id="a${i}">${body}`;
}

/**
 * Microseconds from the start of the `push` that completes `</action>` to the executor being
 * called, for `n` actions one after another in one step: parse, submit, `$` substitution,
 * recording `action.dispatched` through `log` and awaiting it, then the call. Each action's
 * result is durable before the next is pushed, so every sample starts with the log idle.
 */
async function dispatchLatencies(log: ActionLog, n: number): Promise<number[]> {
  let called: (() => void) | undefined;
  let calledAt = 0;
  const executor: ActionExecutor = {
    type: "tool",
    async execute(call) {
      calledAt = performance.now();
      called?.();
      return { ok: call.attempt };
    },
  };
  const variables = createVariableStore({ initial: { last: { ok: 0 } } });
  const scheduler = createStepScheduler({ log, executors: [executor], variables });
  const parser = createProtocolParser();
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + n; i++) {
    for (const event of parser.push(actionHead(i))) {
      if (event.type === "action") throw new Error("the action completed before </action>");
    }
    const reached = new Promise<void>((resolve) => {
      called = resolve;
    });
    const start = performance.now();
    for (const event of parser.push("</action>")) {
      if (event.type === "action") void scheduler.submit(event.action);
      else if (event.type === "error") throw new Error(`parse error: ${event.message}`);
    }
    await reached;
    if (i >= WARMUP) samples.push((calledAt - start) * 1000);
    // Still running here (the executor's promise resolves later): wait for its durable result.
    await scheduler.pendingOutput("last");
    if (scheduler.outcome(`a${i}`)?.status !== "succeeded") throw new Error(`a${i} failed`);
  }
  parser.end();
  scheduler.end();
  await scheduler.settled();
  return samples;
}

/** Microseconds of the parser's push of `</action>` alone: the floor under the in-memory row. */
function parseLatencies(n: number): number[] {
  const parser = createProtocolParser();
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + n; i++) {
    parser.push(actionHead(i));
    const start = performance.now();
    parser.push("</action>");
    if (i >= WARMUP) samples.push((performance.now() - start) * 1000);
  }
  return samples;
}

/** Microseconds of awaited `store.append`s of an `action.dispatched`: the store's own floor. */
async function appendLatencies(store: EventStore, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + n; i++) {
    const start = performance.now();
    await store.append({
      continuity: "bench",
      type: "action.dispatched",
      stream: { kind: "step", id: "floor" },
      data: {
        action_id: `f${i}`,
        type: "tool",
        mode: "async",
        name: "lookup",
        parameters: { query: `item ${i}`, limit: 10, nested: { ref: { ok: 1 } } },
        depends_on: [],
        output_key: "last",
        retry: 0,
        on_error: "fail",
        in_thought: false,
        waited_ms: 0,
      },
    });
    if (i >= WARMUP) samples.push((performance.now() - start) * 1000);
  }
  return samples;
}

async function withStore<T>(
  durability: "strict" | "fast",
  work: (store: EventStore) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "spool-dispatch-"));
  const store = await openEventStore({ db: dir, durability });
  try {
    return await work(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The dispatch-latency table: p50 and p99 with the in-memory log (target p99 ≤ 50 µs) and with
 * a SQLite `EventStore` in strict and in fast durability, where `action.dispatched` is committed
 * before the executor runs (target p99 ≤ 500 µs). Beside each, as the baseline, the floor it stands on:
 * the parser's push alone, and the store's own awaited append of the same event. Medians over
 * `runs` runs.
 */
export async function measureDispatchLatency(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const results = {
    memory: [],
    parse: [],
    strict: [],
    strictAppend: [],
    fast: [],
    fastAppend: [],
  } as Record<
    "memory" | "parse" | "strict" | "strictAppend" | "fast" | "fastAppend",
    LatencySummary[]
  >;
  for (let run = 0; run < runs; run++) {
    progress(`dispatch latency: in-memory log, run ${run + 1}/${runs}`);
    results.parse.push(summarizeLatencies(parseLatencies(SAMPLES.memory)));
    // Without catalog validation: this row is the scheduler's own cost. The SQLite rows include
    // it, since the store validates every append.
    const inMemory = createMemoryActionLog({ validate: false });
    results.memory.push(summarizeLatencies(await dispatchLatencies(inMemory, SAMPLES.memory)));
    for (const durability of ["strict", "fast"] as const) {
      progress(`dispatch latency: SQLite log (${durability}), run ${run + 1}/${runs}`);
      await withStore(durability, async (store) => {
        const appended = summarizeLatencies(await appendLatencies(store, SAMPLES.sqlite));
        results[`${durability}Append`].push(appended);
        const log = createStoreActionLog({ store, continuity: "bench", step: `step-${run}` });
        results[durability].push(summarizeLatencies(await dispatchLatencies(log, SAMPLES.sqlite)));
      });
    }
  }
  const at = (key: keyof typeof results, p: keyof LatencySummary) =>
    median(results[key].map((summary) => summary[p]));
  const rows: ResultRow[] = [];
  for (const p of ["p50", "p99"] as const) {
    rows.push({
      measure: `</action> → executor, in-memory log, ${p}`,
      unit: "µs",
      spool: at("memory", p),
      ceiling: at("parse", p),
      ...(p === "p99" ? { target: { maxValue: 50 } } : {}),
    });
  }
  for (const durability of ["strict", "fast"] as const) {
    for (const p of ["p50", "p99"] as const) {
      rows.push({
        measure: `</action> → executor, SQLite ${durability}, ${p}`,
        unit: "µs",
        spool: at(durability, p),
        ceiling: at(`${durability}Append`, p),
        ...(p === "p99" ? { target: { maxValue: 500 } } : {}),
      });
    }
  }
  return {
    title: "Action dispatch latency",
    baseline: "floor",
    rows,
    notes: [
      `${SAMPLES.memory.toLocaleString("en-US")} (in-memory) and ${SAMPLES.sqlite.toLocaleString("en-US")} (SQLite) actions per run after ${WARMUP} warm-up ones, one at a time, each result durable before the next action; median of ${runs} runs`,
      "timed from the start of the parser push that completes </action> to the executor's first line: parse, submit, $ substitution, action.dispatched recorded and awaited",
      "in-memory log without catalog validation (the scheduler's own cost); the SQLite rows include validation, which the store does on every append",
      "floor: in-memory rows, the parser's push of </action> alone; SQLite rows, an awaited store.append of the same action.dispatched event",
      "SQLite strict: synchronous=FULL, the intent is fsynced before the executor runs (survives a power cut); fast: synchronous=NORMAL, the intent is committed to the WAL before the executor runs (survives a killed process, which is what recovery of interrupted actions needs; a power cut may lose the last commits)",
    ],
  };
}
