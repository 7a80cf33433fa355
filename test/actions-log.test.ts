import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type CheckedActionExecutor,
  createMemoryActionLog,
  createStepScheduler,
  createStoreActionLog,
  createVariableStore,
  taskStreamId,
} from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { openEventStore } from "../src/log/open-store.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { action, drain, handExecutor, lifecycle } from "./support/actions-helpers.js";

let dir: string;
let store: EventStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-actions-log-"));
  store = await openEventStore({ db: dir, durability: "strict" });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function readAll(): Promise<SpoolEvent[]> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity: "c1" })) events.push(event);
  return events;
}

describe("action log over a SQLite EventStore", () => {
  it("action.dispatched is durable in the store before the executor is called", async () => {
    const seenByExecutor: string[][] = [];
    const executor: CheckedActionExecutor = {
      type: "tool",
      async execute(call) {
        // A fresh connection: only what was committed is visible to it.
        const other = await openEventStore({ db: dir });
        try {
          const types: string[] = [];
          for await (const event of other.read({ continuity: "c1" })) {
            if ((event.data as { action_id?: string }).action_id === call.actionId)
              types.push(event.type);
          }
          seenByExecutor.push(types);
        } finally {
          await other.close();
        }
        return { ok: true };
      },
    };
    const log = createStoreActionLog({ store, continuity: "c1", step: "s1" });
    const scheduler = createStepScheduler({
      log,
      executors: [executor],
      variables: createVariableStore(),
    });
    await scheduler.submit(action("a1", { mode: "sync", parameters: { q: 1 } }));
    scheduler.end();
    await scheduler.settled();
    expect(seenByExecutor).toEqual([["action.dispatched"]]);
    // Settled: the terminal events are queued in order; what the step appends next follows them.
    const next = await store.append({
      continuity: "c1",
      stream: { kind: "step", id: "s1" },
      type: "step.completed",
      data: {
        kind: "model",
        thread: "t",
        index: 0,
        provider: "p",
        model: "m",
        usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
        stop_reason: "end",
        duration_ms: 0,
      },
    });
    const events = await readAll();
    expect(events.map((e) => e.type)).toEqual([
      "action.dispatched",
      "action.started",
      "action.succeeded",
      "step.completed",
    ]);
    expect(events.at(-1)!.seq).toBe(next.seq);
    expect(events.every((e) => e.stream.kind === "step" && e.stream.id === "s1")).toBe(true);
    expect(events[0]!.data).toMatchObject({ action_id: "a1", parameters: { q: 1 }, mode: "sync" });
  });

  it("puts a fire_and_forget action's lifecycle on its own task stream", async () => {
    const tools = handExecutor();
    const log = createStoreActionLog({ store, continuity: "c1", step: "s1" });
    const scheduler = createStepScheduler({
      log,
      executors: [tools.executor],
      variables: createVariableStore(),
    });
    await scheduler.submit(action("ff", { mode: "fire_and_forget", outputKey: "x" }));
    scheduler.end();
    await scheduler.settled();
    (await tools.arrival("ff")).resolve(1);
    await scheduler.idle();
    const events = await readAll();
    expect(events.map((e) => `${e.type}@${e.stream.kind}:${e.stream.id}`)).toEqual([
      "action.dispatched@task:s1:ff",
      "action.started@task:s1:ff",
      "action.succeeded@task:s1:ff",
      "variable.set@step:s1",
    ]);
  });

  it("task stream ids stay identifiers when ids are long", () => {
    const id = taskStreamId("s".repeat(100), "a".repeat(100));
    expect(id.length).toBeLessThanOrEqual(128);
    expect(taskStreamId("s".repeat(100), "a".repeat(100))).toBe(id);
  });

  it("rejects an event the catalog refuses, and the scheduler reports it as a step error", async () => {
    const log = createStoreActionLog({ store, continuity: "c1", step: "s1" });
    const tools = handExecutor();
    const scheduler = createStepScheduler({
      log,
      executors: [tools.executor],
      variables: createVariableStore(),
    });
    await scheduler.submit(action("bad id with spaces"));
    scheduler.end();
    const outcome = await scheduler.settled();
    expect(outcome.actions[0]!.error?.code).toBe("log.write-failed");
    expect(tools.calls).toEqual([]);
    expect(scheduler.errors.map((e) => e.code)).toContain("log.write-failed");
    expect(await readAll()).toEqual([]);
  });
});

describe("event order and durations", () => {
  it("records dispatched, started, progress, succeeded with durations from the injected clock", async () => {
    let now = 1000;
    const tools = handExecutor();
    const log = createMemoryActionLog();
    const scheduler = createStepScheduler({
      log,
      executors: [tools.executor],
      variables: createVariableStore(),
      clock: { now: () => now, setTimer: () => () => {} },
    });
    await scheduler.submit(action("b", { dependsOn: ["a"] }));
    now = 1010;
    await scheduler.submit(action("a"));
    await drain();
    now = 1050;
    tools.last("a").call.progress({ percent: 50 });
    now = 1100;
    tools.last("a").resolve("A");
    await drain();
    now = 1300;
    tools.last("b").resolve("B");
    await drain();
    expect(lifecycle(log)).toEqual([
      "dispatched a",
      "started a",
      "progress a",
      "succeeded a",
      "dispatched b",
      "started b",
      "succeeded b",
    ]);
    expect(log.ofType("action.progress")[0]!.data).toEqual({
      action_id: "a",
      attempt: 1,
      data: { percent: 50 },
    });
    const succeeded = log
      .ofType("action.succeeded")
      .map((e) => [e.data.action_id, e.data.duration_ms]);
    expect(succeeded).toEqual([
      ["a", 90],
      ["b", 200],
    ]);
    const waited = log.ofType("action.dispatched").map((e) => [e.data.action_id, e.data.waited_ms]);
    expect(waited).toEqual([
      ["a", 0],
      ["b", 100],
    ]);
  });

  it("does not call the executor until action.dispatched is durable", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const log = createMemoryActionLog({
      durable: (entry) => (entry.type === "action.dispatched" ? held : undefined),
    });
    const tools = handExecutor();
    const scheduler = createStepScheduler({
      log,
      executors: [tools.executor],
      variables: createVariableStore(),
    });
    await scheduler.submit(action("a"));
    await drain();
    expect(lifecycle(log)).toEqual(["dispatched a"]);
    expect(tools.calls).toEqual([]);
    release();
    await drain();
    expect(tools.called()).toEqual(["a"]);
  });
});
