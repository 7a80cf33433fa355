// biome-ignore-all lint/suspicious/noTemplateCurlyInString: hook files write ${event.…} templates in plain strings
/**
 * Stream hooks: when a delivery turn's run starts, `stream_chunk_received` fires once per source
 * it delivers (payload: counts summed over its chunks, `matches` per pattern) and
 * `stream_source_exhausted` when it tells a source's end. A condition on `matches.error` decides
 * and a `rate_limit` holds a hot source's firings back, measured on the delivery turns' logged
 * times (an injected clock): a restarted runtime counts the firings its log holds, and a replay
 * re-derives exactly the same firings. Hook tools take the action path.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseHookFile } from "../src/hooks/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, RuntimeSources } from "../src/runtime/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import { longRunAgent, longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import {
  deliveries,
  MemoryInput,
  memoryAdapters,
  sourceManifest,
  untilLogged,
} from "./support/memory-sources.js";
import { recordingTool } from "./support/runtime-e2e.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "alerts";
const temp = useTempStore("spool-sources-hooks-");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const hooks = parseHookFile(
  `
- id: error_burst
  event: stream_chunk_received
  condition: { path: matches.error, op: gte, value: 3 }
  rate_limit: { min_interval_ms: 60000 }
  action:
    item_type: tool
    item_id: alert
    params: { source: "\${event.source_id}", errors: "\${event.matches.error}", chunk: "\${event.to_chunk}" }
- id: every_error_chunk
  event: stream_chunk_received
  condition: { path: matches.error, op: gte, value: 3 }
  action: { item_type: tool, item_id: alert, params: { count: "\${event.lines}" } }
- id: data_done
  event: stream_source_exhausted
  action: { item_type: tool, item_id: alert, params: { done: "\${event.source_id}", chunks: "\${event.chunks}" } }
`,
  { path: "/x/.ai/hooks/alerts.yaml", tier: "project" },
);

/** Four lines, `errors` of them errors. */
const chunkOf = (n: number, errors: number) =>
  Array.from({ length: 4 }, (_, index) =>
    index < errors ? `ERROR ${n}.${index}` : `ok ${n}.${index}`,
  );

const BASE = Date.parse("2026-11-26T09:00:00Z");
const STEP = 20_000;

describe("stream hooks", () => {
  it("fire on deliveries as their conditions and rate limits say, across a restart and in replay", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "spool-sources-hooks-ws-"));
    dirs.push(workspace);
    const input = new MemoryInput();
    const alert = recordingTool("alert", () => "sent");
    let tick = 0;
    const sources: RuntimeSources = {
      manifest: sourceManifest({
        sources: [
          {
            id: "data",
            kind: "dataset",
            target: "data.txt",
            batch: { max_lines: 4 },
            patterns: { error: "^ERROR" },
          },
        ],
      }),
      access: { workspace, allowPaths: [], allowHosts: [], shell: false },
      adapters: memoryAdapters({ "data.txt": input }),
      // One delivery every 20 s of logged time.
      clock: () => BASE + STEP * tick++,
    };
    const agent = longRunAgent({ tools: [alert.tool] });
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    });
    const make = (store: EventStore, used: Provider, extra: Partial<AgentRuntimeOptions> = {}) =>
      longRunRuntime(store, used, { agent, sources, hooks, ...extra });
    const completedRuns = (count: number) =>
      untilLogged(temp.store, continuity, count, (event) => event.type === "run.completed");

    // Deliveries 1 (3 errors) and 2 (1 error), then the runtime closes.
    input.append(...chunkOf(1, 3), ...chunkOf(2, 1));
    const first = make(temp.store, provider);
    await first.resume(continuity);
    await completedRuns(2);
    await first.idle(continuity);
    await first.close();
    // A fresh runtime: deliveries 3 (4 errors), 4 (3 errors), 5 (3 errors), and the end.
    input.append(...chunkOf(3, 4), ...chunkOf(4, 3), ...chunkOf(5, 3));
    input.end();
    const second = make(temp.store, provider);
    await second.resume(continuity);
    await second.sources(continuity).untilExhausted();
    await second.settled(continuity);
    await second.close();
    const events = await readAll(temp.store, continuity);

    // One chunk a delivery (a dataset is paced), 20 s apart.
    const turns = deliveries(events).filter(
      (turn) => ((turn.data as EventData<"turn.added">).sources ?? []).length > 0,
    );
    expect(turns.map((turn) => Date.parse(turn.ts) - BASE)).toEqual(
      [0, 1, 2, 3, 4].map((i) => i * STEP),
    );
    const fired = (hook: string) =>
      events
        .filter((event) => event.type === "hook.fired")
        .map((event) => event.data as EventData<"hook.fired">)
        .filter((data) => data.hook === hook)
        .map((data) => data.params);
    // No limit: every delivery with 3 errors or more. Limited to one a minute: fired at 0 s, held
    // at 40 s (the firing at 0 s counts across the restart), fired at 60 s, held at 80 s.
    expect(fired("every_error_chunk")).toEqual([
      { count: 4 },
      { count: 4 },
      { count: 4 },
      { count: 4 },
    ]);
    expect(fired("error_burst")).toEqual([
      { source: "data", errors: 3, chunk: 1 },
      { source: "data", errors: 3, chunk: 4 },
    ]);
    expect(fired("data_done")).toEqual([{ done: "data", chunks: 5 }]);
    // Each firing's tool ran through the action path: intent logged, then its result.
    expect(alert.calls).toHaveLength(7);
    const hookActions = events.filter(
      (event: SpoolEvent) =>
        event.type === "action.dispatched" && event.stream.id.includes("@hook"),
    );
    expect(hookActions).toHaveLength(7);

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      stallMs: 5_000,
      makeRuntime: ({ store, world }) => make(store, world.provider, { world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(alert.calls).toHaveLength(7);
  });
});
