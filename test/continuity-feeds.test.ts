import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createToolExecutor, createToolRegistry, defineTool } from "../src/actions/index.js";
import { parseFeedManifest } from "../src/feeds/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { EventData } from "../src/spec/index.js";
import { longRunAgent, longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-feeds-run-");

const manifest = parseFeedManifest(`
context_feeds:
  - id: now
    type: on_demand
    source: { type: internal, action: system_clock, params: { format: ISO8601, timezone: UTC } }
  - id: queue
    type: on_demand
    source: { type: tool, name: queue.depth, params: {} }
`);

describe("context feeds in a run", () => {
  it("reads the agent's feeds before each step, puts them in its context, and replays them from the log", async () => {
    let depth = 0;
    const queueDepth = defineTool({
      name: "queue.depth",
      description: "Jobs waiting.",
      parameters: z.object({}),
      execute: () => ({ waiting: ++depth }),
    });
    let clock = Date.parse("2026-11-23T08:00:00Z");
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>ok</response>"],
    });
    const agent = longRunAgent({ tools: [queueDepth] });
    const runtime = longRunRuntime(temp.store, provider, {
      agent,
      feeds: {
        manifest,
        executors: [createToolExecutor(createToolRegistry([queueDepth]))],
        clock: { now: () => clock },
      },
    });
    await runtime.submit(continuity, { text: "first", actor: "ada", origin: "t" });
    clock += 60_000;
    await runtime.submit(continuity, { text: "second", actor: "ada", origin: "t" });
    await runtime.close();

    const contents = provider.requests.map((request) => JSON.stringify(request.messages));
    expect(contents[0]).toContain("## Context feeds");
    expect(contents[0]).toContain("2026-11-23T08:00:00Z");
    expect(contents[0]).toContain('\\"waiting\\": 1');
    expect(contents[1]).toContain("2026-11-23T08:01:00Z");
    expect(contents[1]).toContain('\\"waiting\\": 2');

    const events = await readAll(temp.store, continuity);
    const recorded = events.filter((event) => event.type === "context.feeds");
    expect(recorded.map((event) => event.stream.kind)).toEqual(["step", "step"]);
    const compiled = events
      .filter((event) => event.type === "context.compiled")
      .map((event) => event.data as EventData<"context.compiled">);
    for (const data of compiled) expect(data.parts?.feeds).toBeGreaterThan(0);
    // The engine's own record of the world sits on the continuity's stream.
    const refreshed = events.filter((event) => event.type === "feed.refreshed");
    expect(refreshed.length).toBe(4);
    expect(refreshed.every((event) => event.stream.kind === "continuity")).toBe(true);

    // Replay reads no source: another clock and a tool that would answer differently change nothing.
    clock += 3_600_000;
    depth = 100;
    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store: target, provider: replayed, intercept, recordedFeeds }) =>
        longRunRuntime(target, replayed, {
          agent,
          intercept,
          recordedFeeds,
          feeds: { manifest, clock: { now: () => clock } },
        }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(depth).toBe(100);
  });
});
