import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import {
  createMemoryIndex,
  createOpenAiEmbedder,
  type MemoryBackend,
  type MemoryIndex,
} from "../../src/memory/index.js";
import { startEmbeddingServer } from "../support/embedding-server.js";
import {
  continuityStart,
  pinEvent,
  summaryEvent,
  turnEvent,
  unpinEvent,
  write,
} from "../support/memory-log.js";

/** A fresh store and a way to open memory backends on it (several, like processes would). */
export interface MemoryHarness {
  store: EventStore;
  backend(): Promise<MemoryBackend>;
  cleanup(): Promise<void>;
}

/**
 * The memory index's contract, run unchanged on SQLite (FTS5 in a sibling file) and PostgreSQL
 * (full-text search beside the log).
 */
export function memoryContract(factory: () => Promise<MemoryHarness>): void {
  let harness: MemoryHarness | undefined;
  const indexes: MemoryIndex[] = [];
  const open = async (embedder?: Parameters<typeof createMemoryIndex>[0]["embedder"]) => {
    harness ??= await factory();
    const index = createMemoryIndex({
      store: harness.store,
      backend: await harness.backend(),
      ...(embedder ? { embedder } : {}),
    });
    indexes.push(index);
    return { index, store: harness.store };
  };
  afterEach(async () => {
    for (const index of indexes.splice(0)) await index.close();
    await harness?.cleanup();
    harness = undefined;
  });

  describe("memory index", () => {
    it("indexes summaries and pinned facts, never pinned rules, and never the asking continuity", async () => {
      const { index, store } = await open();
      await write(store, [
        ...continuityStart("c-trip", "ana"),
        summaryEvent(
          "c-trip",
          "th-1",
          "s1",
          "Booked the Lisbon flight for March; the hotel is near Alfama.",
        ),
        pinEvent("c-trip", "p1", "Ana's passport expires in 2027.", "fact"),
        pinEvent("c-trip", "p2", "Always answer about Lisbon in Portuguese.", "rule"),
        ...continuityStart("c-now", "ana"),
        summaryEvent("c-now", "th-2", "s2", "Talked about Lisbon restaurants."),
      ]);
      const found = await index.search({
        text: "When does the Lisbon trip happen?",
        exclude: ["c-now"],
      });
      expect(found.ranking).toBe("fts");
      expect(found.hits.map((hit) => [hit.continuity, hit.kind, hit.ref])).toEqual([
        ["c-trip", "summary", "s1"],
      ]);
      expect(found.hits[0]!.rank).toBe(1);
      const passport = await index.search({ text: "passport expiry" });
      expect(passport.hits.map((hit) => hit.ref)).toEqual(["p1"]);
      expect((await index.search({ text: "Portuguese" })).hits).toEqual([]);
    });

    it("follows unpins, re-pins and summaries brought up to date", async () => {
      const { index, store } = await open();
      await write(store, [
        ...continuityStart("c1", "ana"),
        pinEvent("c1", "p1", "The staging database is on port 5433."),
        summaryEvent("c1", "th-1", "s1", "Investigated the flaky checkout test."),
      ]);
      expect((await index.search({ text: "staging database port" })).hits).toHaveLength(1);
      await write(store, [
        pinEvent("c1", "p1", "The staging database moved to port 6543."),
        summaryEvent(
          "c1",
          "th-1",
          "s2",
          "The flaky checkout test was a race in the cart service.",
          "s1",
        ),
      ]);
      const moved = await index.search({ text: "staging database port" });
      expect(moved.hits.map((hit) => hit.text)).toEqual([
        "The staging database moved to port 6543.",
      ]);
      const checkout = await index.search({ text: "flaky checkout test" });
      expect(checkout.hits.map((hit) => hit.ref)).toEqual(["s2"]);
      await write(store, [unpinEvent("c1", "p1")]);
      expect((await index.search({ text: "staging database port" })).hits).toEqual([]);
      expect((await index.stats()).entries).toBe(1);
    });

    it("scopes a search to the continuities an actor took part in", async () => {
      const { index, store } = await open();
      await write(store, [
        ...continuityStart("c-ana", "ana"),
        summaryEvent("c-ana", "th-1", "s1", "Ana's cat Miso needs insulin twice a day."),
        ...continuityStart("c-bo", "bo"),
        summaryEvent("c-bo", "th-2", "s2", "Bo's cat Pixel eats only dry food."),
        turnEvent("c-bo", "ana", "Ana joined to ask about cat food."),
      ]);
      const ana = await index.search({ text: "cat", actor: "ana", limit: 10 });
      expect(ana.hits.map((hit) => hit.continuity).sort()).toEqual(["c-ana", "c-bo"]);
      const bo = await index.search({ text: "cat", actor: "bo", limit: 10 });
      expect(bo.hits.map((hit) => hit.continuity)).toEqual(["c-bo"]);
      expect((await index.search({ text: "cat", actor: "zed" })).hits).toEqual([]);
    });

    it("keeps its log position, so a second index catches up from there and agrees", async () => {
      const { index, store } = await open();
      await write(store, [
        ...continuityStart("c1", "ana"),
        summaryEvent("c1", "th-1", "s1", "Migrated the invoices table to bigint ids."),
      ]);
      await index.catchUp();
      const position = (await index.stats()).position;
      expect(position).toBe(await store.head());
      await write(store, [
        summaryEvent("c1", "th-1", "s9", "Invoices now render in the customer's currency."),
      ]);
      const second = (await open()).index;
      // The second reads only what came after the stored position: one event.
      expect(await second.catchUp()).toBe(1);
      const invoices = await second.search({ text: "invoices", limit: 10 });
      expect(invoices.hits.map((hit) => hit.ref).sort()).toEqual(["s1", "s9"]);
      expect((await index.search({ text: "invoices", limit: 10 })).hits).toHaveLength(2);
    });

    it("rebuilds from the log with reindex and finds the same", async () => {
      const { index, store } = await open();
      await write(store, [
        ...continuityStart("c1", "ana"),
        summaryEvent(
          "c1",
          "th-1",
          "s1",
          "The VPN drops when the laptop sleeps; reconnecting fixes it.",
        ),
        pinEvent("c1", "p1", "The office wifi password rotates every Monday."),
        pinEvent("c1", "p2", "Temporary fact."),
        unpinEvent("c1", "p2"),
      ]);
      const before = await index.search({ text: "vpn laptop wifi", limit: 10 });
      const rebuilt = await index.reindex();
      expect(rebuilt).toEqual({ entries: 2, position: await store.head() });
      const after = await index.search({ text: "vpn laptop wifi", limit: 10 });
      expect(after.hits.map((hit) => hit.id)).toEqual(before.hits.map((hit) => hit.id));
    });

    it("never fails on any query text", async () => {
      const { index, store } = await open();
      await write(store, [
        ...continuityStart("c1", "ana"),
        summaryEvent(
          "c1",
          "th-1",
          "s1",
          'Quoted "phrases", NEAR(a b), col:umn, a* AND OR NOT -x & | ! ( ) : <-> \\',
        ),
      ]);
      await index.catchUp();
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 60, unit: "binary" }), async (text) => {
          const found = await index.search({ text, limit: 3 });
          expect(found.hits.length).toBeLessThanOrEqual(3);
        }),
        { numRuns: 80 },
      );
      for (const text of [
        '"',
        "NEAR(",
        "a AND",
        "*",
        "-",
        "!!",
        "col:",
        "<->",
        "'",
        "\\",
        "OR OR",
        "()",
      ]) {
        await expect(index.search({ text })).resolves.toBeDefined();
      }
    });

    it("fuses embeddings from an OpenAI-compatible server, and falls back to full text when it fails", async () => {
      const server = await startEmbeddingServer();
      try {
        const embedder = createOpenAiEmbedder({ model: "test-embed", baseURL: server.baseURL });
        const { index, store } = await open(embedder);
        await write(store, [
          ...continuityStart("c1", "ana"),
          summaryEvent("c1", "th-1", "s1", "Ana is intolerant to lactose and avoids cheese."),
          summaryEvent("c1", "th-2", "s2", "Renewed the lease of the downtown office."),
        ]);
        const found = await index.search({ text: "food allergies" });
        expect(found.ranking).toBe("hybrid");
        // No word in common: only the vectors can find it.
        expect(found.hits[0]!.ref).toBe("s1");
        expect(server.requests.flat()).toContain("Ana is intolerant to lactose and avoids cheese.");
        server.failWith(503);
        const degraded = await index.search({ text: "office lease" });
        expect(degraded.ranking).toBe("fts");
        expect(degraded.degraded).toMatch(/embedding API/);
        expect(degraded.hits[0]!.ref).toBe("s2");
      } finally {
        await server.close();
      }
    });
  });
}
