import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import { collect, created, delta, turn } from "../support/events.js";
import type { HarnessFactory, StoreHarness } from "./harness.js";

/** read by continuity / stream / type / seq range, paging, fold, heads. */
export function readContract(factory: HarnessFactory): void {
  describe("read and fold", () => {
    let harness: StoreHarness;
    let store: EventStore;
    beforeEach(async () => {
      harness = await factory();
      store = await harness.open({ pageSize: 7 });
      await store.appendBatch([created("a"), created("b")]);
      for (let i = 0; i < 20; i++) {
        await store.appendBatch([
          turn(i % 2 ? "a" : "b", `turn ${i}`),
          delta(i % 2 ? "a" : "b", `step-${i % 3}`, `d${i}`),
        ]);
      }
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    it("reads the whole log in seq order across pages", async () => {
      const events = await collect(store.read());
      expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 42 }, (_, i) => i + 1));
    });

    it("reads one continuity", async () => {
      const events = await collect(store.read({ continuity: "a" }));
      expect(events).toHaveLength(21);
      expect(events.every((event) => event.continuity === "a")).toBe(true);
      expect(events.map((event) => event.seq)).toEqual(
        [...events.map((event) => event.seq)].sort((x, y) => x - y),
      );
    });

    it("reads one stream", async () => {
      const events = await collect(store.read({ stream: { kind: "step", id: "step-1" } }));
      expect(events.map((event) => (event.data as { text: string }).text)).toEqual([
        "d1",
        "d4",
        "d7",
        "d10",
        "d13",
        "d16",
        "d19",
      ]);
      const own = await collect(store.read({ stream: { kind: "continuity", id: "a" } }));
      expect(own.map((event) => event.type)).toEqual([
        "continuity.created",
        ...Array(10).fill("turn.added"),
      ]);
      const inContinuity = await collect(
        store.read({ continuity: "a", stream: { kind: "step", id: "step-1" } }),
      );
      expect(inContinuity.map((event) => (event.data as { text: string }).text)).toEqual([
        "d1",
        "d7",
        "d13",
        "d19",
      ]);
    });

    it("reads by type and by seq range, with a limit", async () => {
      const created = await collect(store.read({ types: ["continuity.created"] }));
      expect(created.map((event) => event.continuity)).toEqual(["a", "b"]);
      const range = await collect(store.read({ after: 10, until: 25 }));
      expect(range.map((event) => event.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 11));
      const limited = await collect(store.read({ continuity: "b", after: 3, limit: 9 }));
      expect(limited).toHaveLength(9);
      expect(limited[0]!.seq).toBeGreaterThan(3);
      expect(await collect(store.read({ continuity: "nobody" }))).toEqual([]);
      expect(await collect(store.read({ types: [] }))).toEqual([]);
      expect(await collect(store.read({ after: 42 }))).toEqual([]);
    });

    it("folds a projection over a query", async () => {
      const counts = await store.fold(
        { continuity: "a" },
        {
          initial: () => ({}) as Record<string, number>,
          reduce: (state, event) => {
            state[event.type] = (state[event.type] ?? 0) + 1;
            return state;
          },
        },
      );
      expect(counts).toEqual({ "continuity.created": 1, "turn.added": 10, "token.delta": 10 });
      const lastTurn = await store.fold(
        { types: ["turn.added"], until: 10 },
        { initial: "", reduce: (_, event) => (event.data as { text: string }).text },
      );
      expect(lastTurn).toBe("turn 3");
    });

    it("reports heads of the log and of each continuity", async () => {
      expect(await store.head()).toBe(42);
      const heads = await store.continuities();
      expect(
        heads.map((head) => [head.continuity, head.events, head.firstSeq, head.lastSeq]),
      ).toEqual([
        ["a", 21, 1, 42],
        ["b", 21, 2, 40],
      ]);
      const last = (await collect(store.read({ continuity: "b" }))).at(-1)!;
      expect(await store.continuity("b")).toMatchObject({ headHash: last.hash, lastAt: last.ts });
      expect(await store.continuity("nobody")).toBeUndefined();
    });
  });
  describe("reads of large events", () => {
    let harness: StoreHarness;
    let store: EventStore;
    /** 40 turns of 900,000 characters each (36 MB): no page may hold them all. */
    const texts = Array.from({ length: 40 }, (_, i) => `${i}:`.padEnd(900_000, String(i % 10)));
    beforeEach(async () => {
      harness = await factory();
      store = await harness.open({ pageSize: 30 });
      for (const text of texts) await store.append(turn("big", text));
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    it("page by size: read, fold and subscribe see every event once, in order", async () => {
      const read = await collect(store.read({ continuity: "big" }));
      expect(read.map((event) => (event.data as { text: string }).text)).toEqual(texts);
      const folded = await store.fold(
        { continuity: "big" },
        { initial: () => [] as number[], reduce: (seqs, event) => [...seqs, event.seq] },
      );
      expect(folded).toEqual(read.map((event) => event.seq));
      const seen: number[] = [];
      for await (const message of store.subscribe({ continuity: "big" })) {
        if (message.type === "up-to-date") break;
        seen.push(message.event.seq);
      }
      expect(seen).toEqual(read.map((event) => event.seq));
    });
  });
}
