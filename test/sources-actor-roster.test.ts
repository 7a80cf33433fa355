/**
 * A continuity that keeps an access list gets its sources' actors (`source:<id>`, and `sources`
 * for deliveries of several at once) added with write access when they are taken up, so their
 * delivery turns are accepted like anyone's; a continuity without a list is left without one.
 * A source whose adapter throws, or that returns without a word, fails for good
 * (`source.adapter-failed`, `source.returned`) and is told. Replay is identical.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createScriptedProvider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { ActorRosters, type RuntimeSources } from "../src/runtime/index.js";
import type { EventData } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import {
  deliveries,
  MemoryInput,
  memoryAdapters,
  sourceManifest,
} from "./support/memory-sources.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "team";
const temp = useTempStore("spool-sources-roster-");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(): RuntimeSources {
  const workspace = mkdtempSync(join(tmpdir(), "spool-sources-roster-ws-"));
  dirs.push(workspace);
  const input = new MemoryInput();
  input.append("hello");
  input.end();
  return {
    manifest: sourceManifest({
      sources: [
        { id: "news", kind: "file", target: "news.txt" },
        { id: "broken", kind: "dataset", target: "broken.csv" },
        { id: "quiet", kind: "file", target: "quiet.txt" },
      ],
    }),
    access: { workspace, allowPaths: [], allowHosts: [], shell: false },
    adapters: {
      file: (definition, access) =>
        definition.target === "quiet.txt"
          ? { definition, run: async () => {} }
          : memoryAdapters({ "news.txt": input }, ["file"]).file!(definition, access),
      dataset: () => {
        throw new Error("the CSV header is missing");
      },
    },
  };
}

const provider = () =>
  createScriptedProvider({ model: SMALL_MODEL, loop: true, script: ["<response>Ok.</response>"] });

describe("sources and the access list", () => {
  it("adds the sources' actors to a continuity that keeps a list; their turns are accepted", async () => {
    await temp.store.append({
      continuity,
      type: "actor.added",
      actor: "ada",
      origin: "cli",
      data: { actor_id: "ada", kind: "person", access: "owner" },
    });
    const sources = setup();
    const runtime = longRunRuntime(temp.store, provider(), { sources });
    await runtime.submit(continuity, { text: "Read the news.", actor: "ada", origin: "t" });
    await runtime.sources(continuity).untilExhausted();
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    const report = await replayContinuity({
      source: temp.store,
      continuity,
      stallMs: 5_000,
      makeRuntime: ({ store, world }) => longRunRuntime(store, world.provider, { sources, world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);

    const added = events
      .filter((event) => event.type === "actor.added")
      .map((event) => event.data as EventData<"actor.added">);
    expect(added).toEqual([
      { actor_id: "ada", kind: "person", access: "owner" },
      { actor_id: "source:news", kind: "source", access: "write" },
      { actor_id: "source:broken", kind: "source", access: "write" },
      { actor_id: "source:quiet", kind: "source", access: "write" },
      { actor_id: "sources", kind: "source", access: "write" },
    ]);
    const rosters = new ActorRosters(temp.store);
    for (const turn of deliveries(events)) await rosters.check(continuity, turn.actor!);
    expect(deliveries(events).length).toBeGreaterThan(0);
    // The adapter that threw: a final failure with its message, told to the agent.
    const failed = events
      .filter((event) => event.type === "source.failed")
      .map((event) => event.data as EventData<"source.failed">);
    expect(failed).toContainEqual({
      source_id: "broken",
      final: true,
      error: { code: "source.adapter-failed", message: "the CSV header is missing" },
    });
    // A source that returned without a word: failed for good, so nothing waits for it for ever.
    expect(failed.find((data) => data.source_id === "quiet")).toMatchObject({
      final: true,
      error: { code: "source.returned" },
    });
    const told = deliveries(events).map((turn) => (turn.data as EventData<"turn.added">).text);
    expect(told.join("\n")).toContain('Source "broken" failed and stopped (source.adapter-failed)');
  });

  it("adds no actors to a continuity without a list", async () => {
    const runtime = longRunRuntime(temp.store, provider(), { sources: setup() });
    await runtime.submit(continuity, { text: "Read the news.", actor: "ada", origin: "t" });
    await runtime.sources(continuity).untilExhausted();
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    expect(events.filter((event) => event.type === "actor.added")).toEqual([]);
    expect(deliveries(events).length).toBeGreaterThan(0);
  });
});
