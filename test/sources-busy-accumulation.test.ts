/**
 * While the agent is busy, a source's chunks accumulate in the log (never dropped) and the next
 * delivery, once the continuity is idle, covers all of them in one turn (replay is identical); a
 * turn a user queued meanwhile goes first.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions } from "../src/runtime/index.js";
import type { EventData } from "../src/spec/index.js";
import { longRunAgent, longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import {
  deliveredRanges,
  deliveries,
  MemoryInput,
  memoryAdapters,
  sourceManifest,
  untilLogged,
} from "./support/memory-sources.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "busy";
const temp = useTempStore("spool-sources-busy-");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tool that works until `release` is called, the agent it runs in, and the feed it reads. */
function busySetup(script: string[]) {
  const workspace = mkdtempSync(join(tmpdir(), "spool-sources-busy-ws-"));
  dirs.push(workspace);
  const input = new MemoryInput();
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const hold = defineTool({
    name: "hold",
    description: "Works for a long time.",
    parameters: z.object({}),
    execute: async () => {
      await held;
      return { done: true };
    },
  });
  const agent = longRunAgent({ tools: [hold] });
  const sources = {
    manifest: sourceManifest({
      sources: [{ id: "feed", kind: "file", target: "feed.log", batch: { max_lines: 2 } }],
    }),
    access: { workspace, allowPaths: [], allowHosts: [], shell: false },
    adapters: memoryAdapters({ "feed.log": input }),
  };
  const provider = createScriptedProvider({ model: SMALL_MODEL, script });
  const make = (store: typeof temp.store, overrides: Partial<AgentRuntimeOptions> = {}) =>
    longRunRuntime(store, overrides.provider ?? provider, { agent, sources, ...overrides });
  return { input, release: () => release(), make };
}

const HOLD = '<action type="tool" mode="sync" id="h1">{"name": "hold", "parameters": {}}</action>';

/** Feeds 10 lines (5 chunks) and the end while the run is busy in `hold`. */
async function feedWhileBusy(input: MemoryInput): Promise<void> {
  await untilLogged(temp.store, continuity, 1, (event) => event.type === "action.dispatched");
  input.append(...Array.from({ length: 10 }, (_, index) => `line ${index + 1}`));
  input.end();
  await untilLogged(temp.store, continuity, 1, (event) => event.type === "source.exhausted");
}

describe("a busy agent", () => {
  it("gets every chunk that came during its long run in one delivery after it; replay is identical", async () => {
    const { input, release, make } = busySetup([
      HOLD,
      "<response>Held.</response>",
      "<response>Read the feed.</response>",
    ]);
    const runtime = make(temp.store);
    const first = runtime.submit(continuity, { text: "Work.", actor: "ada", origin: "t" });
    await feedWhileBusy(input);
    // Nothing was delivered while the run went on.
    expect(deliveries(await readAll(temp.store, continuity))).toEqual([]);
    release();
    await first;
    await runtime.sources(continuity).untilExhausted();
    await runtime.close();
    const events = await readAll(temp.store, continuity);

    const turns = deliveries(events);
    expect(turns).toHaveLength(1);
    expect(deliveredRanges(events).get("feed")).toEqual([{ from: 1, to: 5 }]);
    const text = (turns[0]!.data as EventData<"turn.added">).text;
    for (let index = 1; index <= 10; index++) expect(text).toContain(`line ${index}`);
    expect(text).toContain('Source "feed" is exhausted');

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      stallMs: 5_000,
      makeRuntime: ({ store, world }) => make(store, { provider: world.provider, world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });

  it("runs a user turn queued during the long run before the delivery", async () => {
    // (Not replayed: replay serves the held tool's result at once, so it cannot re-enact a turn
    // queued behind a run that was still going; that holds for any queued turn, sources or not.)
    const { input, release, make } = busySetup([
      HOLD,
      "<response>Held.</response>",
      "<response>Answered Bea.</response>",
      "<response>Read the feed.</response>",
    ]);
    const runtime = make(temp.store);
    const first = runtime.submit(continuity, { text: "Work.", actor: "ada", origin: "t" });
    await feedWhileBusy(input);
    const second = runtime.submit(continuity, { text: "Bea here.", actor: "bea", origin: "t" });
    await untilLogged(temp.store, continuity, 1, (event) => event.type === "turn.queued");
    release();
    await Promise.all([first, second]);
    await runtime.sources(continuity).untilExhausted();
    await runtime.close();
    const events = await readAll(temp.store, continuity);

    const turns = deliveries(events);
    expect(turns).toHaveLength(1);
    expect(deliveredRanges(events).get("feed")).toEqual([{ from: 1, to: 5 }]);
    const runs = events
      .filter((event) => event.type === "run.started")
      .map((event) => (event.data as EventData<"run.started">).turn);
    const bea = events.find((event) => event.type === "turn.added" && event.actor === "bea")!.id;
    expect(runs.slice(-2)).toEqual([bea, turns[0]!.id]);
  });
});
