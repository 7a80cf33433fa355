/**
 * The long run of a source: realistic log lines (access logs, syslog errors, a burst of 503s,
 * from `generateLogLines`) in a file read by a dataset source (one chunk a delivery, paced by the
 * agent), through a real runtime on SQLite whose model has an 8k window and answers each
 * delivery with a short note, so its threads fill and hand off many times. Then:
 *
 * - handoffs happened, and every `handoff.seeded` and every `summary.completed` of a thread that
 *   was delivered chunks carries the source's position;
 * - at every handoff the chunks the summaries cover and those carried verbatim tile the chunks
 *   delivered, no gap and no overlap, resuming at the next one (`checkSourceTiling`);
 * - every line of the file is logged once, in order; the chunks are 1..N with no gap, each
 *   delivered by exactly one delivery turn, in order;
 * - `replay` of the continuity is identical, opening nothing outside.
 *
 * Size: `SPOOL_LONG_RUN_LINES` lines (default 200,000).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, RuntimeSources } from "../src/runtime/index.js";
import {
  DEFAULT_SOURCE_ADAPTERS,
  parseSourceManifest,
  readChunkLines,
} from "../src/sources/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import {
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import { generateLogLines } from "./support/log-lines.js";
import { deliveredRanges } from "./support/memory-sources.js";
import { checkSourceTiling } from "./support/source-tiling.js";
import { useTempStore } from "./support/transcripts.js";

const continuity = "night-watch";
const LINES = Number(process.env.SPOOL_LONG_RUN_LINES ?? 200_000);
const SOURCE = "access-log";
const temp = useTempStore("spool-sources-long-run-");

/** The watcher's sources: the log file as a dataset, 1,000 lines a chunk at most. */
function watchSources(workspace: string): RuntimeSources {
  return {
    manifest: parseSourceManifest({
      sources: [
        {
          id: SOURCE,
          kind: "dataset",
          target: "logs/access.log",
          mode: "cursor",
          batch: { max_lines: 1_000, max_bytes: 256 * 1024 },
          patterns: { server_error: '" 5\\d\\d ', oom: "Out of memory" },
        },
      ],
    }),
    access: { workspace, allowPaths: [], allowHosts: [], shell: false },
    adapters: DEFAULT_SOURCE_ADAPTERS,
  };
}

function watcher(store: EventStore, provider: Provider, sources: RuntimeSources, extra = {}) {
  return longRunRuntime(store, provider, { sources, ...(extra as Partial<AgentRuntimeOptions>) });
}

describe("a source's long run", () => {
  it(`reads ${LINES.toLocaleString("en-US")} log lines through many handoffs, every chunk delivered once and tiled at every handoff, and replays identically`, {
    timeout: 900_000,
  }, async () => {
    const workspace = join(temp.dir, "workspace");
    mkdirSync(join(workspace, "logs"), { recursive: true });
    const lines = generateLogLines({ seed: 11, count: LINES, burstAt: Math.floor(LINES * 0.6) });
    writeFileSync(join(workspace, "logs", "access.log"), `${lines.join("\n")}\n`);
    const sources = watchSources(workspace);
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted: nothing new beyond the usual errors.</response>"],
    });
    const provider = routedProvider(foreground, scriptedSummarizer());
    const runtime = watcher(temp.store, provider, sources);
    await runtime.submit(continuity, {
      text: "Watch the access log; tell me about bursts of errors.",
      actor: "ada",
      origin: "test",
    });
    await runtime.sources(continuity).untilExhausted();
    await runtime.close();

    const events: SpoolEvent[] = [];
    for await (const event of temp.store.read({ continuity })) events.push(event);

    // Every line once, in order; the chunks 1..N; each delivered once, in order.
    const chunks = events.filter((event) => event.type === "source.chunk");
    const numbers = chunks.map((event) => (event.data as EventData<"source.chunk">).n);
    expect(numbers).toEqual(numbers.map((_, index) => index + 1));
    const logged: string[] = [];
    for (const event of chunks) logged.push(...(await readChunkLines(temp.store, event)));
    expect(logged.length).toBe(lines.length);
    expect(logged.every((line, index) => line === lines[index])).toBe(true);
    const delivered = (deliveredRanges(events).get(SOURCE) ?? []).flatMap(({ from, to }) =>
      Array.from({ length: to - from + 1 }, (_, index) => from + index),
    );
    expect(delivered).toEqual(numbers);

    // Threads filled and handed off, each handoff with the source's position.
    const handoffs = events.filter((event) => event.type === "thread.continued");
    const seeds = events.filter((event) => event.type === "handoff.seeded");
    expect(handoffs.length).toBeGreaterThanOrEqual(Math.max(1, Math.floor(numbers.length / 20)));
    expect(seeds.length).toBe(handoffs.length);
    for (const seed of seeds) {
      const data = seed.data as EventData<"handoff.seeded">;
      expect(data.sources?.map((position) => position.source_id)).toEqual([SOURCE]);
    }
    const tiling = await checkSourceTiling(temp.store, continuity);
    expect(tiling.problems).toEqual([]);
    expect(tiling.handoffs).toBe(seeds.length);
    expect(tiling.chained).toBeGreaterThan(0);
    expect(tiling.split).toBeGreaterThan(0);
    const summaries = events.filter((event) => event.type === "summary.completed");
    expect(summaries.length).toBeGreaterThanOrEqual(seeds.length);
    for (const summary of summaries) {
      const data = summary.data as EventData<"summary.completed">;
      expect(data.sources?.map((span) => span.source_id)).toEqual([SOURCE]);
    }

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      stallMs: 10_000,
      makeRuntime: ({ store, world }) => watcher(store, world.provider, sources, { world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, reached: [] });
    console.log(
      `sources long run: ${lines.length.toLocaleString("en-US")} lines in ${numbers.length} chunks and deliveries, ${handoffs.length} handoffs (${tiling.split} split between summary and verbatim, ${tiling.chained} of seeded threads), ${summaries.length} summaries, ${events.length.toLocaleString("en-US")} events; replay compared ${report.compared}`,
    );
  });
});
