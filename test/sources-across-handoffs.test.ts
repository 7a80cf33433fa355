/**
 * Deliveries go on across handoffs: a dataset delivered batch by batch into an 8k window fills
 * the context, the thread hands off to continuations (summarized), and every chunk is still
 * delivered exactly once, in order, each delivery the newest message of the call that took it.
 * The run replays identically.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import {
  createScriptedProvider,
  type Provider,
  type ProviderRequest,
} from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, RuntimeSources } from "../src/runtime/index.js";
import type { EventData } from "../src/spec/index.js";
import {
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import {
  chunkNumbers,
  deliveredRanges,
  deliveries,
  MemoryInput,
  memoryAdapters,
  sourceManifest,
} from "./support/memory-sources.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "long-feed";
const temp = useTempStore("spool-sources-handoff-");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const CHUNKS = 60;

describe("deliveries across handoffs", () => {
  it("deliver every chunk once, in order, while the thread hands off; replay is identical", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "spool-sources-handoff-ws-"));
    dirs.push(workspace);
    const input = new MemoryInput();
    for (let chunk = 1; chunk <= CHUNKS; chunk++) {
      input.append(
        ...Array.from(
          { length: 6 },
          (_, line) =>
            `record ${chunk}.${line}: sensor=${(chunk * 7 + line) % 13} reading=${chunk * 31 + line} status=${line % 3 === 0 ? "warm" : "steady"}`,
        ),
      );
    }
    input.end();
    const sources: RuntimeSources = {
      manifest: sourceManifest({
        sources: [
          { id: "readings", kind: "dataset", target: "readings.csv", batch: { max_lines: 6 } },
        ],
      }),
      access: { workspace, allowPaths: [], allowHosts: [], shell: false },
      adapters: memoryAdapters({ "readings.csv": input }),
    };
    const newest: string[] = [];
    const inspect = (request: ProviderRequest, summary: boolean) => {
      if (summary) return;
      const last = request.messages.at(-1);
      newest.push(last?.role === "user" && typeof last.content === "string" ? last.content : "");
    };
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted the readings.</response>"],
    });
    const make = (
      store: EventStore,
      provider: Provider,
      extra: Partial<AgentRuntimeOptions> = {},
    ) => longRunRuntime(store, provider, { sources, ...extra });
    const runtime = make(temp.store, routedProvider(foreground, scriptedSummarizer(), inspect));
    await runtime.resume(continuity);
    await runtime.sources(continuity).untilExhausted();
    await runtime.settled(continuity);
    await runtime.close();
    const events = await readAll(temp.store, continuity);

    expect(events.filter((event) => event.type === "thread.continued").length).toBeGreaterThan(0);
    const numbers = chunkNumbers(events, "readings");
    expect(numbers).toEqual(Array.from({ length: CHUNKS }, (_, index) => index + 1));
    expect(deliveredRanges(events).get("readings")).toEqual(
      numbers.map((n) => ({ from: n, to: n })),
    );
    // Every delivery reached the model as the newest message of a call, whatever thread it ran in.
    for (const turn of deliveries(events)) {
      expect(newest).toContain((turn.data as EventData<"turn.added">).text);
    }

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      stallMs: 5_000,
      makeRuntime: ({ store, world }) => make(store, world.provider, { world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });
});
