import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import {
  createKvRelic,
  createRelicExecutor,
  createRelicHost,
  KvState,
  type RelicHost,
} from "../src/relics/index.js";
import { collect } from "./support/events.js";

const continuity = "home";
let dir: string;
let store: EventStore;
let host: RelicHost;

const open = () => openEventStore({ db: dir, durability: "fast" });
const newHost = (options: { maxValueBytes?: number } = {}) =>
  createRelicHost({ store, continuity, relics: [createKvRelic(options)] });
const kv = (method: string, parameters: Record<string, unknown>) =>
  host.call("kv", method, parameters);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-relic-kv-"));
  store = await open();
  host = newHost();
});
afterEach(async () => {
  await host.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the kv relic", () => {
  it("sets, gets, lists and deletes keys, versioned by the seq of their kv.set", async () => {
    const a = (await kv("set", { key: "user:1", value: { name: "Ada" } })) as { version: number };
    await kv("set", { key: "user:2", value: [1, 2] });
    await kv("set", { key: "other", value: "x" });
    expect(await kv("get", { key: "user:1" })).toEqual({
      key: "user:1",
      found: true,
      value: { name: "Ada" },
      version: a.version,
    });
    const setEvents = await collect(store.read({ continuity, types: ["kv.set"] }));
    expect(setEvents[0]!.seq).toBe(a.version);

    const page = (await kv("list", { prefix: "user:", limit: 1 })) as {
      entries: Array<{ key: string }>;
      next_after?: string;
    };
    expect(page.entries.map((entry) => entry.key)).toEqual(["user:1"]);
    expect(page.next_after).toBe("user:1");
    const rest = (await kv("list", { prefix: "user:", after: page.next_after })) as {
      entries: Array<{ key: string; value: unknown }>;
      next_after?: string;
    };
    expect(rest).toEqual({
      entries: [{ key: "user:2", version: expect.any(Number), value: [1, 2] }],
    });

    expect(await kv("delete", { key: "user:1" })).toEqual({ key: "user:1", deleted: true });
    expect(await kv("delete", { key: "user:1" })).toEqual({ key: "user:1", deleted: false });
    expect(await kv("get", { key: "user:1" })).toEqual({ key: "user:1", found: false });

    const types = (await collect(store.read({ continuity }))).map((event) => event.type);
    expect(types.slice(0, 3)).toEqual(["relic.started", "kv.set", "relic.called"]);
    expect(types.filter((type) => type === "kv.deleted")).toHaveLength(1);
  });

  it("compare-and-set refuses a stale version and writes nothing", async () => {
    const first = (await kv("set", { key: "n", value: 1, if_version: 0 })) as { version: number };
    await expect(kv("set", { key: "n", value: 9, if_version: 0 })).rejects.toMatchObject({
      code: "relic.kv.conflict",
    });
    const second = (await kv("set", { key: "n", value: 2, if_version: first.version })) as {
      version: number;
    };
    await expect(kv("set", { key: "n", value: 3, if_version: first.version })).rejects.toThrow(
      `key "n" is at version ${second.version}, not ${first.version}`,
    );
    await expect(kv("delete", { key: "n", if_version: first.version })).rejects.toMatchObject({
      code: "relic.kv.conflict",
    });
    expect(await kv("get", { key: "n" })).toMatchObject({ value: 2, version: second.version });
    // A deleted and re-created key never reuses a version.
    await kv("delete", { key: "n" });
    const third = (await kv("set", { key: "n", value: 4, if_version: 0 })) as { version: number };
    expect(third.version).toBeGreaterThan(second.version);
    expect(await collect(store.read({ continuity, types: ["kv.set"] }))).toHaveLength(3);
  });

  it("serializes concurrent compare-and-sets: exactly one of two racing writers wins", async () => {
    const results = await Promise.allSettled([
      kv("set", { key: "lock", value: "a", if_version: 0 }),
      kv("set", { key: "lock", value: "b", if_version: 0 }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
  });

  it("survives reopening the store: a new host folds the same state from the log", async () => {
    await kv("set", { key: "a", value: { deep: [1, { x: true }] } });
    await kv("set", { key: "b", value: 2 });
    await kv("set", { key: "b", value: 3 });
    await kv("delete", { key: "a" });
    const before = await kv("list", {});
    await host.close();
    await store.close();

    store = await open();
    host = newHost();
    expect(await kv("list", {})).toEqual(before);
    expect(await kv("get", { key: "b" })).toMatchObject({ found: true, value: 3 });
    expect(await kv("get", { key: "a" })).toEqual({ key: "a", found: false });
  });

  it("keeps kv relics with different names apart", async () => {
    await host.close();
    host = createRelicHost({
      store,
      continuity,
      relics: [createKvRelic(), createKvRelic({ name: "notes" })],
    });
    await host.call("kv", "set", { key: "k", value: "kv" });
    await host.call("notes", "set", { key: "k", value: "notes" });
    expect(await host.call("kv", "get", { key: "k" })).toMatchObject({ value: "kv" });
    const state = await KvState.load(store, continuity, "notes");
    expect(state.get("k")?.value).toBe("notes");
    expect(state.size).toBe(1);
  });

  it("refuses a value over the cap with a clear error and writes nothing", async () => {
    await host.close();
    host = newHost({ maxValueBytes: 100 });
    await expect(kv("set", { key: "big", value: "x".repeat(200) })).rejects.toMatchObject({
      code: "relic.kv.value-too-large",
      message: expect.stringContaining("202 bytes of JSON; the limit is 100 bytes"),
    });
    expect(await collect(store.read({ continuity, types: ["kv.set"] }))).toEqual([]);
    await expect(kv("set", { key: "big", value: "x".repeat(64) })).resolves.toMatchObject({
      key: "big",
    });
  });

  it("is reachable as relic actions, with parameters checked before dispatch", () => {
    const executor = createRelicExecutor(host);
    expect(executor.type).toBe("relic");
    expect(executor.names?.()).toEqual(["kv.get", "kv.set", "kv.delete", "kv.list"]);
    expect(executor.canRun?.("kv.get")).toBe(true);
    expect(executor.canRun?.("kv.fetch")).toBe(false);
    expect(executor.canRun?.("cache.get")).toBe(false);
    expect(executor.canRun?.("kv")).toBe(false);
    expect(executor.check?.("kv.set", { key: "k", value: 1 })).toBeUndefined();
    const refusal = executor.check?.("kv.set", { key: "", valu: 1 });
    expect(refusal?.reason).toBe("bad-parameters");
    expect(refusal?.message).toContain('relic method "kv.set"');
    expect(refusal?.message).toContain("key:");
    expect(refusal?.message).toContain("valu");
    // Nothing started: a refused call never reaches the relic.
    expect(host.state("kv")).toBe("idle");
  });

  it("runs a relic action through the executor with the action's id logged", async () => {
    const executor = createRelicExecutor(host);
    const call = {
      actionId: "a1",
      type: "relic" as const,
      attempt: 1,
      signal: new AbortController().signal,
      progress: () => undefined,
    };
    await executor.execute({ ...call, name: "kv.set", parameters: { key: "k", value: 5 } });
    expect(
      await executor.execute({ ...call, name: "kv.get", parameters: { key: "k" } }),
    ).toMatchObject({ value: 5 });
    const called = await collect(store.read({ continuity, types: ["relic.called"] }));
    expect(called.map((event) => event.data)).toEqual([
      expect.objectContaining({ relic: "kv", method: "set", status: "succeeded", action_id: "a1" }),
      expect.objectContaining({ relic: "kv", method: "get", status: "succeeded", action_id: "a1" }),
    ]);
  });
});
