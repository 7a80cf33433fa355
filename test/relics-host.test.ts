import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { createRelicHost, type Relic, RelicError } from "../src/relics/index.js";
import { collect } from "./support/events.js";

const continuity = "home";
let dir: string;
let store: EventStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-relic-host-"));
  store = await openEventStore({ db: dir, durability: "fast" });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A counter relic whose `crash` method fails fatally and whose `oops` fails plainly. */
function counterRelic(log: string[], options: { failStarts?: number } = {}): Relic {
  let count = 0;
  let failStarts = options.failStarts ?? 0;
  return {
    name: "counter",
    describe: () => ({
      description: "counts",
      methods: {
        add: { description: "adds", parameters: z.strictObject({ by: z.number().int() }) },
        crash: { description: "breaks it", parameters: z.strictObject({}) },
        oops: { description: "fails once", parameters: z.strictObject({}) },
      },
    }),
    async start() {
      log.push("start");
      if (failStarts > 0) {
        failStarts -= 1;
        throw new Error("port in use");
      }
      count = 0;
    },
    async call(method, parameters) {
      log.push(`call ${method}`);
      if (method === "crash")
        throw new RelicError("relic.counter.corrupt", "state corrupt", { fatal: true });
      if (method === "oops") throw new RelicError("relic.counter.oops", "not today");
      count += (parameters as { by: number }).by;
      return count;
    },
    async stop() {
      log.push("stop");
    },
  };
}

const lifecycle = async () =>
  (await collect(store.read({ continuity }))).map((event) => {
    const data = event.data as { method?: string; status?: string; restart?: number };
    return [event.type, data.method ?? data.restart ?? ""].join(" ").trim();
  });

describe("RelicHost", () => {
  it("starts a relic lazily once for concurrent first calls and stops it on close", async () => {
    const log: string[] = [];
    const host = createRelicHost({ store, continuity, relics: [counterRelic(log)] });
    expect(host.state("counter")).toBe("idle");
    expect(log).toEqual([]);
    const results = await Promise.all([
      host.call("counter", "add", { by: 1 }),
      host.call("counter", "add", { by: 2 }),
    ]);
    expect(results.sort()).toEqual([1, 3]);
    expect(log.filter((entry) => entry === "start")).toHaveLength(1);
    await host.close();
    await host.close();
    expect(log.at(-1)).toBe("stop");
    expect(host.state("counter")).toBe("closed");
    await expect(host.call("counter", "add", { by: 1 })).rejects.toMatchObject({
      code: "relic.closed",
    });
    expect(await lifecycle()).toEqual([
      "relic.started 0",
      "relic.called add",
      "relic.called add",
      "relic.stopped",
    ]);
  });

  it("refuses unknown relics, unknown methods and bad parameters, listing what exists", async () => {
    const log: string[] = [];
    const host = createRelicHost({ store, continuity, relics: [counterRelic(log)] });
    await expect(host.call("cache", "get", {})).rejects.toMatchObject({
      code: "relic.unknown",
      message: expect.stringContaining("Use one of: counter"),
    });
    await expect(host.call("counter", "sub", {})).rejects.toMatchObject({
      code: "relic.unknown-method",
      message: expect.stringContaining("counter.add, counter.crash, counter.oops"),
    });
    await expect(host.call("counter", "add", { by: "two" })).rejects.toMatchObject({
      code: "relic.bad-parameters",
      message: expect.stringContaining("by:"),
    });
    expect(log).toEqual([]);
    expect(await lifecycle()).toEqual([]);
    await host.close();
  });

  it("restarts a relic after a fatal failure, and gives up after maxRestarts", async () => {
    const log: string[] = [];
    const host = createRelicHost({
      store,
      continuity,
      relics: [counterRelic(log)],
      maxRestarts: 1,
    });
    await host.call("counter", "add", { by: 5 });
    await expect(host.call("counter", "oops", {})).rejects.toMatchObject({
      code: "relic.counter.oops",
    });
    expect(host.state("counter")).toBe("running");
    await expect(host.call("counter", "crash", {})).rejects.toMatchObject({
      code: "relic.counter.corrupt",
    });
    expect(host.state("counter")).toBe("failed");
    // Restarted on the next call, with fresh state.
    expect(await host.call("counter", "add", { by: 1 })).toBe(1);
    await expect(host.call("counter", "crash", {})).rejects.toMatchObject({
      code: "relic.counter.corrupt",
    });
    expect(host.state("counter")).toBe("broken");
    await expect(host.call("counter", "add", { by: 1 })).rejects.toMatchObject({
      code: "relic.unavailable",
    });
    expect(log.filter((entry) => entry === "start")).toHaveLength(2);
    expect(await lifecycle()).toEqual([
      "relic.started 0",
      "relic.called add",
      "relic.called oops",
      "relic.called crash",
      "relic.failed crash",
      "relic.stopped",
      "relic.started 1",
      "relic.called add",
      "relic.called crash",
      "relic.failed crash",
      "relic.stopped",
    ]);
    const failed = await collect(store.read({ continuity, types: ["relic.failed"] }));
    expect(failed.map((event) => event.data)).toEqual([
      expect.objectContaining({ phase: "call", failures: 1, will_restart: true }),
      expect.objectContaining({ phase: "call", failures: 2, will_restart: false }),
    ]);
    await host.close();
  });

  it("counts failures within restartWindowMs only, and starts a broken relic again after it", async () => {
    let clock = 0;
    const host = createRelicHost({
      store,
      continuity,
      relics: [counterRelic([])],
      maxRestarts: 1,
      restartWindowMs: 60_000,
      now: () => clock,
    });
    const crash = () =>
      expect(host.call("counter", "crash", {})).rejects.toMatchObject({
        code: "relic.counter.corrupt",
      });
    await crash();
    clock = 1_000;
    await crash();
    expect(host.state("counter")).toBe("broken");
    clock = 60_999;
    await expect(host.call("counter", "add", { by: 1 })).rejects.toMatchObject({
      code: "relic.unavailable",
      message: expect.stringContaining("down for 1 s more"),
    });
    clock = 61_000;
    expect(await host.call("counter", "add", { by: 2 })).toBe(2);
    // Failures a window apart never add up: a relic that crashes now and then keeps coming back.
    for (let time = 1; time <= 5; time += 1) {
      clock += 61_000;
      await crash();
      expect(host.state("counter")).toBe("failed");
    }
    expect(await host.call("counter", "add", { by: 3 })).toBe(3);
    const failed = await collect(store.read({ continuity, types: ["relic.failed"] }));
    expect(failed.map((event) => (event.data as { failures: number }).failures)).toEqual([
      1, 2, 1, 1, 1, 1, 1,
    ]);
    await host.close();
  });

  it("logs a failed start and starts again on the next call", async () => {
    const log: string[] = [];
    const host = createRelicHost({
      store,
      continuity,
      relics: [counterRelic(log, { failStarts: 1 })],
    });
    await expect(host.call("counter", "add", { by: 1 })).rejects.toMatchObject({
      code: "relic.start-failed",
      message: expect.stringContaining("port in use"),
    });
    expect(await host.call("counter", "add", { by: 1 })).toBe(1);
    expect(await lifecycle()).toEqual(["relic.failed", "relic.started 0", "relic.called add"]);
    await host.close();
  });

  it("rejects bad relic names when the host is made", () => {
    const relic = counterRelic([]);
    expect(() =>
      createRelicHost({ store, continuity, relics: [{ ...relic, name: "my.relic" }] }),
    ).toThrow(/not a lowercase word/);
    expect(() => createRelicHost({ store, continuity, relics: [relic, relic] })).toThrow(
      /two relics are named "counter"/,
    );
  });
});
