/**
 * A failing memory index never breaks a run: with a damaged `spool.memory.db` the session runs
 * on without memory (its recall and its `memory` feed give nothing), the user is warned once
 * with the error's code and the fix (`spool memory reindex`), the failure is logged once as
 * `memory.failed`, replay is identical, and reopening with `replaceDamaged` (what `spool memory
 * reindex` does) rebuilds the index from the log.
 */
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseFeedManifest } from "../src/feeds/index.js";
import type { EventStore } from "../src/log/index.js";
import {
  createMemoryRecaller,
  lazyMemoryIndex,
  type MemoryIndex,
  openMemoryIndex,
} from "../src/memory/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { type ReplayWorld, replayContinuity } from "../src/replay/index.js";
import type { RunNotice } from "../src/runtime/index.js";
import type { EventData } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { continuityStart, pinEvent, write } from "./support/memory-log.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-memory-failing-");
const continuity = "today";
const FACT = "The beagle needs his rabies shot in March at the Linden Street vet.";

const manifest = parseFeedManifest(`
context_feeds:
  - id: recalled
    type: on_demand
    source: { type: internal, action: memory }
`);

/** The memory file of the temp store, after an index was opened once. */
function memoryFile(dir: string): string {
  const found = readdirSync(join(dir, "store")).filter((name) => name.endsWith(".memory.db"));
  expect(found).toHaveLength(1);
  return join(dir, "store", found[0]!);
}

function runtimeFor(
  store: EventStore,
  provider: Provider,
  index: MemoryIndex | undefined,
  observer?: (notice: RunNotice) => void,
  world?: ReplayWorld,
) {
  return longRunRuntime(store, provider, {
    feeds: { manifest },
    ...(index ? { memoryIndex: index, memory: createMemoryRecaller(index, { tokens: 300 }) } : {}),
    ...(observer ? { observer } : {}),
    ...(world ? { world } : {}),
  });
}

describe("a failing memory index", () => {
  it("leaves the session running without memory, warns once, and is rebuilt by replaceDamaged", async () => {
    const store = temp.store;
    const db = join(temp.dir, "store");
    await write(store, [...continuityStart("vet", "ada"), pinEvent("vet", "p-rabies", FACT)]);
    await (await openMemoryIndex({ store, db, env: {} })).close();
    const file = memoryFile(temp.dir);
    for (const suffix of ["-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
    writeFileSync(file, "this is not a SQLite database\n".repeat(400));

    // Opened as the CLI opens it: on first use, by every recall and feed read that needs it.
    const index = lazyMemoryIndex("sqlite", () => openMemoryIndex({ store, db, env: {} }));
    const notices: RunNotice[] = [];
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    });
    const runtime = runtimeFor(store, provider, index, (notice) => notices.push(notice));
    for (const text of ["When is the beagle's rabies shot due?", "And where?"]) {
      const result = await runtime.submit(continuity, { text, actor: "ada", origin: "test" });
      expect(result.status).toBe("completed");
    }
    await runtime.close();
    await index.close();

    const warnings = notices.filter((notice) => notice.type === "memory-notice");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: "memory.storage" });
    expect((warnings[0] as { text: string }).text).toContain("spool memory reindex");

    const events = await readAll(store, continuity);
    const failed = events.filter((event) => event.type === "memory.failed");
    expect(failed).toHaveLength(1);
    const data = failed[0]!.data as EventData<"memory.failed">;
    expect(data.trigger).toBe("start");
    expect(data.error.code).toBe("memory.storage");
    expect(data.error.hint).toContain("spool memory reindex");
    expect(events.some((event) => event.type === "memory.recalled")).toBe(false);
    // The feed failed at each step and shows the model that memory is unavailable, not a fact.
    const feedFailures = events
      .filter((event) => event.type === "feed.failed")
      .map((event) => (event.data as EventData<"feed.failed">).error.code);
    expect(feedFailures.length).toBeGreaterThan(0);
    expect(new Set(feedFailures)).toEqual(new Set(["memory.storage"]));
    for (const request of provider.requests) {
      const text = JSON.stringify(request.messages);
      expect(text).toContain('status=\\"unavailable\\" error=\\"memory.storage\\"');
      expect(text).not.toContain("Linden Street");
    }

    const report = await replayContinuity({
      source: store,
      continuity,
      makeRuntime: ({ store: target, world }) =>
        runtimeFor(target, world.provider, undefined, undefined, world),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);

    // Opening it plainly still fails, with the typed error; replaceDamaged rebuilds it.
    await expect(openMemoryIndex({ store, db, env: {} })).rejects.toMatchObject({
      code: "memory.storage",
    });
    const rebuilt = await openMemoryIndex({ store, db, env: {}, replaceDamaged: true });
    try {
      const found = await rebuilt.search({ text: "beagle rabies shot" });
      expect(found.hits.map((hit) => hit.text)).toContain(FACT);
    } finally {
      await rebuilt.close();
    }
  }, 60_000);
});
