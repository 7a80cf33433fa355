import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import { EventValidationError, StoreError } from "../../src/spec/index.js";
import { collect, created, delta, turn } from "../support/events.js";
import type { HarnessFactory, StoreHarness } from "./harness.js";

/** append, appendBatch, validation, group commit, coalescing, close. */
export function appendContract(factory: HarnessFactory): void {
  describe("append", () => {
    let harness: StoreHarness;
    let store: EventStore;
    let clock = 0;
    beforeEach(async () => {
      harness = await factory();
      clock = 0;
      store = await harness.open({
        defaults: { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString() },
      });
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    it("stores an event with its envelope filled in", async () => {
      const event = await store.append(created("main", "First"));
      expect(event).toMatchObject({
        seq: 1,
        continuity: "main",
        stream: { kind: "continuity", id: "main" },
        type: "continuity.created",
        ts: "2026-01-01T00:00:00.000Z",
        actor: "ada",
        origin: "test",
        criticality: "critical",
        data: { title: "First" },
      });
      expect(event.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(event.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(await collect(store.read())).toEqual([event]);
    });

    it("keeps ids and times the caller brings", async () => {
      const event = await store.append({
        ...turn("main", "hi"),
        id: "01JABCDEFGHJKMNPQRSTVWXYZ0",
        ts: "2025-05-05T05:05:05+02:00",
      });
      expect(event.id).toBe("01JABCDEFGHJKMNPQRSTVWXYZ0");
      expect(event.ts).toBe("2025-05-05T05:05:05+02:00");
    });

    it("rejects an event that fails its schema, writing nothing", async () => {
      await store.append(created("main"));
      const bad = [
        { ...turn("main", "x"), data: { text: 42 } },
        { ...turn("main", "x"), actor: undefined },
        { ...turn("main", "x"), data: { text: "x", extra: true } },
        { ...turn("main", "x"), continuity: "has space" },
        { ...turn("main", "x"), stream: { kind: "step", id: "s1" } },
        { ...turn("main", "x"), ts: "yesterday" },
        { ...turn("main", "x"), stream: { kind: "continuity", id: "elsewhere" } },
        { ...turn("main", "x"), origin: "nul\u0000byte" },
        { ...turn("main", "x"), origin: "lone \ud800" },
        { ...delta("main", "s1", "x"), stream: undefined },
        { continuity: "main", type: "turn.add", data: {} },
        null,
      ];
      for (const event of bad) {
        const error = await store.append(event as never).catch((caught: unknown) => caught);
        expect(error, JSON.stringify(event)).toBeInstanceOf(EventValidationError);
        expect((error as EventValidationError).issues.length).toBeGreaterThan(0);
      }
      expect(await store.head()).toBe(1);
    });

    it("names the failing field and how to fix it", async () => {
      const error = (await store
        .append({ ...turn("main", "x"), data: { text: 1 } } as never)
        .catch((e: unknown) => e)) as EventValidationError;
      expect(error.code).toBe("event.invalid");
      expect(error.issues).toContainEqual(expect.objectContaining({ path: "data.text" }));
      expect(error.message).toContain("data.text");
      expect(error.message).toContain("Nothing was written");
      const unknown = (await store
        .append({ continuity: "main", type: "turn.add", data: {} } as never)
        .catch((e: unknown) => e)) as EventValidationError;
      expect(unknown.code).toBe("event.unknown-type");
      expect(unknown.message).toContain("turn.added");
    });

    it("writes a batch atomically: one bad event and none are written", async () => {
      await store.append(created("main"));
      const error = await store
        .appendBatch([turn("main", "a"), { ...turn("main", "b"), data: {} }, turn("main", "c")])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EventValidationError);
      expect(await store.head()).toBe(1);
      const stored = await store.appendBatch([
        turn("main", "a"),
        turn("other", "b"),
        turn("main", "c"),
      ]);
      expect(stored.map((event) => event.seq)).toEqual([2, 3, 4]);
      expect(await store.appendBatch([])).toEqual([]);
    });

    it("orders concurrent appends exactly as they were called", async () => {
      const texts = Array.from({ length: 300 }, (_, i) => `t${i}`);
      const stored = await Promise.all(
        texts.map((text, i) => store.append(turn(i % 2 ? "a" : "b", text))),
      );
      expect(stored.map((event) => event.seq)).toEqual(texts.map((_, i) => i + 1));
      const read = await collect(store.read());
      expect(read.map((event) => (event.data as { text: string }).text)).toEqual(texts);
    });

    it("coalesces adjacent droppable deltas of one stream and block", async () => {
      const parts = ["Hel", "lo", ", ", "wor", "ld"];
      const stored = await Promise.all(
        parts.map((part) => store.append(delta("main", "s1", part))),
      );
      expect(new Set(stored.map((event) => event.seq))).toEqual(new Set([1]));
      const events = await collect(store.read());
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: "token.delta",
        criticality: "droppable",
        data: { block: "text", text: "Hello, world" },
      });
    });

    it("never reorders droppable events around critical ones", async () => {
      const results = await Promise.all([
        store.append(delta("main", "s1", "a")),
        store.append(delta("main", "s1", "b")),
        store.append(delta("main", "s2", "x")),
        store.append(delta("main", "s1", "c", "thinking")),
        store.append(turn("main", "critical")),
        store.append(delta("main", "s1", "d")),
      ]);
      await store.flush();
      const events = await collect(store.read());
      expect(events.map((event) => [event.type, (event.data as { text: string }).text])).toEqual([
        ["token.delta", "ab"],
        ["token.delta", "x"],
        ["token.delta", "c"],
        ["turn.added", "critical"],
        ["token.delta", "d"],
      ]);
      expect(results.map((event) => event.seq)).toEqual([1, 1, 2, 3, 4, 5]);
    });

    it("writes pending droppable events on flush and on close", async () => {
      const pending = store.append(delta("main", "s1", "late"));
      await store.flush();
      expect(await store.head()).toBe(1);
      expect((await pending).seq).toBe(1);
      const last = store.append(delta("main", "s1", "at close"));
      await store.close();
      expect((await last).seq).toBe(2);
      const reopened = await harness.open();
      expect(await reopened.head()).toBe(2);
      await reopened.close();
    });

    it("refuses appends after close and closes idempotently", async () => {
      await store.close();
      await store.close();
      const error = await store.append(turn("main", "x")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe("store.closed");
    });

    it("keeps large payloads and every kind of unicode intact", async () => {
      const texts = [
        'é😀 𝄞 مرحبا 你好 \u0000 \u2028 tab\tquote" backslash\\',
        "lone \ud800 surrogate and \udfff",
        "🧵".repeat(200_000),
        "x".repeat(999_000),
      ];
      for (const text of texts) await store.append(turn("main", text));
      const events = await collect(store.read());
      expect(events.map((event) => (event.data as { text: string }).text)).toEqual(texts);
    });
  });
}
