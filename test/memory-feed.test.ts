/**
 * The `memory` context feed in a run: a scripted session whose agent declares it gets another
 * continuity's fact in its context, for the newest user turn and within its budget; the value is
 * logged (`feed.refreshed`, `context.feeds`), so a replay after the index changed is identical
 * and searches nothing.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseFeedManifest } from "../src/feeds/index.js";
import type { EventStore } from "../src/log/index.js";
import { type MemoryIndex, openMemoryIndex } from "../src/memory/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import type { ProviderRequest } from "../src/providers/provider.js";
import { type ReplayWorld, replayContinuity } from "../src/replay/index.js";
import type { EventData } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { continuityStart, pinEvent, unpinEvent, write } from "./support/memory-log.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-memory-feed-");
const continuity = "today";
const FACT = "The beagle needs his rabies shot in March at the Linden Street vet.";

const manifest = parseFeedManifest(`
context_feeds:
  - id: recalled
    type: on_demand
    source: { type: internal, action: memory, params: { tokens: 200, limit: 3 } }
`);

function requestText(request: ProviderRequest): string {
  return JSON.stringify(request.messages);
}

function runtimeFor(
  store: EventStore,
  provider: Provider,
  index?: MemoryIndex,
  world?: ReplayWorld,
) {
  return longRunRuntime(store, provider, {
    feeds: { manifest },
    ...(index ? { memoryIndex: index } : {}),
    ...(world ? { world } : {}),
  });
}

describe("the memory context feed", () => {
  it("offers another continuity's fact for the newest turn, and replays from the log after the index changed", async () => {
    const store = temp.store;
    await write(store, [
      ...continuityStart("vet", "ada"),
      pinEvent("vet", "p-rabies", FACT),
      ...continuityStart("bo-vet", "bo"),
      pinEvent("bo-vet", "p-bo", "Bo's beagle had his rabies shot already."),
    ]);
    const index = await openMemoryIndex({ store, db: join(temp.dir, "store"), env: {} });
    try {
      const provider = createScriptedProvider({
        model: SMALL_MODEL,
        loop: true,
        script: ["<response>Noted.</response>"],
      });
      const runtime = runtimeFor(store, provider, index);
      const result = await runtime.submit(continuity, {
        text: "When is the beagle's rabies shot due?",
        actor: "ada",
        origin: "test",
      });
      expect(result.status).toBe("completed");
      await runtime.close();

      // The model saw the other continuity's fact, never Bo's (the actor scope).
      const seen = requestText(provider.requests[0]!);
      expect(seen).toContain('<context_feed id=\\"recalled\\">');
      expect(seen).toContain("Linden Street vet");
      expect(seen).not.toContain("Bo's beagle");

      // The value is the logged decision: the refresh holds it, the step's feeds record it.
      const events = await readAll(store, continuity);
      const refreshed = events
        .filter((event) => event.type === "feed.refreshed")
        .map((event) => event.data as EventData<"feed.refreshed">);
      expect(refreshed).toHaveLength(1);
      expect(refreshed[0]!.feed_id).toBe("recalled");
      expect(refreshed[0]!.value).toContain("fact · continuity vet");
      expect(refreshed[0]!.value).toContain(FACT);
      expect(refreshed[0]!.tokens).toBeLessThanOrEqual(200 + 50);
      const feeds = events.find((event) => event.type === "context.feeds")!;
      expect((feeds.data as EventData<"context.feeds">).text).toContain(FACT);

      // The index changes: the fact is unpinned; a search now finds nothing of it.
      await write(store, [unpinEvent("vet", "p-rabies")]);
      await index.reindex();
      const now = await index.search({ text: "beagle rabies shot", actor: "ada" });
      expect(now.hits.map((hit) => hit.text)).not.toContain(FACT);
      const report = await replayContinuity({
        source: store,
        continuity,
        makeRuntime: ({ store: target, world }) => runtimeFor(target, world.provider, index, world),
      });
      expect(report.difference).toBeUndefined();
      expect(report.identical).toBe(true);
    } finally {
      await index.close();
    }
  }, 60_000);

  it("says when there is nothing to offer, and rejects bad parameters with the field named", async () => {
    const store = temp.store;
    await write(store, [...continuityStart("vet", "ada"), pinEvent("vet", "p-1", FACT)]);
    const index = await openMemoryIndex({ store, db: join(temp.dir, "store"), env: {} });
    try {
      const provider = createScriptedProvider({
        model: SMALL_MODEL,
        loop: true,
        script: ["<response>Noted.</response>"],
      });
      const runtime = runtimeFor(store, provider, index);
      await runtime.submit(continuity, {
        text: "Which train goes to Porto?",
        actor: "ada",
        origin: "test",
      });
      await runtime.close();
      expect(requestText(provider.requests[0]!)).toContain(
        'Nothing in other conversations matches \\"Which train goes to Porto?\\"',
      );
      const bad = parseFeedManifest(`
context_feeds:
  - id: recalled
    type: on_demand
    source: { type: internal, action: memory, params: { limit: 50 } }
`);
      const broken = longRunRuntime(store, provider, {
        feeds: { manifest: bad },
        memoryIndex: index,
      });
      await expect(
        broken.submit("other", { text: "beagle?", actor: "ada", origin: "test" }),
      ).rejects.toMatchObject({
        code: "config.feeds",
        message: expect.stringContaining(
          'feed "recalled": source.params.limit: must be at most 20',
        ),
      });
      await broken.close();
    } finally {
      await index.close();
    }
  }, 60_000);
});
