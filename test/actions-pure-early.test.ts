/**
 * On a log that allows it (`pureStartsEarly`, a `fast` store), a pure call starts while its intent
 * is being written: its own events still follow the intent, it concludes only once the intent is
 * written, and a refused intent stops it and leaves nothing of it in the log. Everything else (a
 * side effect, a call the executor does not call pure, any call on another log) waits for its
 * intent as before.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ActionLog,
  type ActionLogEntry,
  type CheckedActionExecutor,
  createMemoryActionLog,
  createStepScheduler,
  createStoreActionLog,
  createVariableStore,
  type MemoryActionLog,
  SerialQueue,
} from "../src/actions/index.js";
import { openEventStore } from "../src/log/index.js";
import { gateExecutor } from "../src/runtime/index.js";
import { action, drain, handExecutor, lifecycle } from "./support/actions-helpers.js";
import { refusingIntents } from "./support/store-taps.js";
import { tempStore } from "./support/transcripts.js";

/** A memory log that holds each `action.dispatched` until the test writes or refuses it. */
function heldIntents(pureStartsEarly: boolean): {
  log: MemoryActionLog;
  write(id: string): void;
  refuse(id: string): void;
} {
  const intents = new Map<string, { resolve(): void; reject(error: Error): void }>();
  const inner = createMemoryActionLog({
    durable: (entry: ActionLogEntry) => {
      if (entry.type !== "action.dispatched") return;
      return new Promise<void>((resolve, reject) => {
        intents.set(entry.data.action_id, { resolve, reject });
      });
    },
  });
  const log: MemoryActionLog = {
    entries: inner.entries,
    record: (type, data, scope) => inner.record(type, data, scope),
    ofType: (type) => inner.ofType(type),
    subscribe: (listener) => inner.subscribe(listener),
    ...(pureStartsEarly ? { pureStartsEarly } : {}),
  };
  const intent = (id: string) => {
    const found = intents.get(id);
    if (!found) throw new Error(`no intent of ${id} is held`);
    return found;
  };
  return {
    log,
    write: (id) => intent(id).resolve(),
    refuse: (id) => intent(id).reject(new Error("disk full")),
  };
}

/** A hand-settled executor whose calls are pure (or not, or only some names). */
function executor(pure: boolean | ((name: string) => boolean)) {
  const hand = handExecutor("tool");
  const checked: CheckedActionExecutor = {
    ...hand.executor,
    pure: typeof pure === "function" ? pure : () => pure,
  };
  return { ...hand, executor: checked };
}

function scheduler(log: ActionLog, executors: CheckedActionExecutor[]) {
  return createStepScheduler({
    log,
    executors,
    variables: createVariableStore(),
    random: () => 0,
  });
}

/** A pure executor's step on a fast log that holds its intents. */
function pureOnFastLog() {
  const held = heldIntents(true);
  const tool = executor(true);
  return { held, tool, run: scheduler(held.log, [tool.executor]) };
}

describe("a pure call on a fast log", () => {
  it("starts before its intent is written, and logs and ends only after", async () => {
    const { held, tool, run } = pureOnFastLog();
    let ended = false;
    void run.submit(action("a1", { mode: "sync" })).then(() => {
      ended = true;
    });
    const call = await tool.arrival("a1");
    call.call.progress({ half: true });
    call.resolve({ ok: 1 });
    await drain();
    // Ran and returned, but nothing of it is logged, and the action is not over.
    expect(lifecycle(held.log)).toEqual(["dispatched a1"]);
    expect(ended).toBe(false);
    held.write("a1");
    await drain();
    expect(lifecycle(held.log)).toEqual([
      "dispatched a1",
      "started a1",
      "progress a1",
      "succeeded a1",
    ]);
    expect(ended).toBe(true);
    run.end();
    expect((await run.settled()).actions[0]).toMatchObject({
      status: "succeeded",
      output: { ok: 1 },
    });
  });

  it("a refused intent stops the call and leaves nothing of it but the step error", async () => {
    const { held, tool, run } = pureOnFastLog();
    void run.submit(action("a1", { mode: "sync" }));
    const call = await tool.arrival("a1");
    held.refuse("a1");
    await drain();
    expect(call.call.signal.aborted).toBe(true);
    // Its late answer changes nothing.
    call.resolve({ ok: 1 });
    run.end();
    const outcome = await run.settled();
    expect(outcome.actions[0]).toMatchObject({
      status: "failed",
      error: { code: "log.write-failed", message: expect.stringContaining("so it was stopped") },
    });
    expect(lifecycle(held.log)).toEqual(["dispatched a1"]);
    expect(outcome.errors.map((error) => error.code)).toEqual(["log.write-failed"]);
  });

  it("cancelled before its intent is written: started, then cancelled, after the intent", async () => {
    const { held, tool, run } = pureOnFastLog();
    void run.submit(action("a1", { mode: "async" }));
    const call = await tool.arrival("a1");
    const cancelled = run.cancel("the user pressed Ctrl-C");
    expect(call.call.signal.aborted).toBe(true);
    await drain();
    expect(lifecycle(held.log)).toEqual(["dispatched a1"]);
    held.write("a1");
    await cancelled;
    expect(lifecycle(held.log)).toEqual(["dispatched a1", "started a1", "cancelled a1"]);
  });

  it("a retry's events follow the intent too", async () => {
    const held = heldIntents(true);
    const tool = executor(true);
    const run = createStepScheduler({
      log: held.log,
      executors: [tool.executor],
      variables: createVariableStore(),
      random: () => 0,
      backoff: { baseMs: 0, maxMs: 0 },
    });
    void run.submit(action("a1", { mode: "async", retry: 1 }));
    (await tool.arrival("a1")).reject(new Error("flaky"));
    await drain();
    expect(tool.calls).toHaveLength(1);
    expect(lifecycle(held.log)).toEqual(["dispatched a1"]);
    held.write("a1");
    await expect.poll(() => tool.calls.length).toBe(2);
    tool.calls[1]!.resolve("second");
    run.end();
    expect((await run.settled()).actions[0]).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(lifecycle(held.log)).toEqual([
      "dispatched a1",
      "started a1",
      "retrying a1",
      "started a1",
      "succeeded a1",
    ]);
  });
});

describe("what waits for its intent", () => {
  const cases: Array<[string, boolean, () => ReturnType<typeof executor>]> = [
    ["a call its executor does not call pure", true, () => executor(false)],
    ["a pure call on a log that does not allow it (strict)", false, () => executor(true)],
    ["a pure-named call of another name", true, () => executor((name) => name === "other")],
  ];
  for (const [name, early, make] of cases) {
    it(name, async () => {
      const held = heldIntents(early);
      const tool = make();
      const run = scheduler(held.log, [tool.executor]);
      void run.submit(action("a1", { mode: "async" }));
      await drain();
      expect(tool.calls).toHaveLength(0);
      held.write("a1");
      await tool.arrival("a1");
    });
  }

  it("a side effect (a call with a serial queue), even when called pure", async () => {
    const held = heldIntents(true);
    const tool = executor(true);
    const serial = new SerialQueue();
    const run = scheduler(held.log, [{ ...tool.executor, serialQueue: () => serial }]);
    void run.submit(action("a1", { mode: "async" }));
    await drain();
    expect(tool.calls).toHaveLength(0);
    held.write("a1");
    await tool.arrival("a1");
  });
});

describe("which calls the session's gate calls pure", () => {
  const gate = (type: "tool" | "llm" | "relic") =>
    gateExecutor(
      { type, execute: () => Promise.resolve(null) },
      {
        permits: () => true,
        directive: "tester",
        sideEffects: (name) => name === "fs.write",
        serial: new SerialQueue(),
      },
    );

  it("a tool without side effects, and no tool with them", () => {
    expect(gate("tool").pure?.("fs.read")).toBe(true);
    expect(gate("tool").pure?.("fs.write")).toBe(false);
  });

  it("no call of another kind (a model call spends, a relic changes the world)", () => {
    expect(gate("llm").pure).toBeUndefined();
    expect(gate("relic").pure).toBeUndefined();
  });
});

describe("the store's action log", () => {
  it("allows early pure calls on a fast store only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-pure-early-"));
    try {
      for (const [durability, early] of [
        ["fast", true],
        ["strict", false],
      ] as const) {
        const store = await openEventStore({ db: join(dir, durability), durability });
        try {
          const log = createStoreActionLog({ store, continuity: "c1", step: "s1" });
          expect(Boolean(log.pureStartsEarly)).toBe(early);
        } finally {
          await store.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a pure call on a fast SQLite store", () => {
  /** Runs one pure `a1` on a fast store whose `action.dispatched` is refused when `refuse` is set. */
  async function runPure(refuse: boolean) {
    const { store: inner, cleanup } = await tempStore("spool-pure-store-");
    const store = refusingIntents(inner, () => refuse);
    try {
      const ran: string[] = [];
      const tool: CheckedActionExecutor = {
        type: "tool",
        pure: () => true,
        execute: async (call) => {
          ran.push(call.actionId);
          return { ok: true };
        },
      };
      const log = createStoreActionLog({ store, continuity: "c1", step: "s1" });
      const run = scheduler(log, [tool]);
      await run.submit(action("a1", { mode: "sync" }));
      run.end();
      const outcome = await run.settled();
      await inner.flush();
      const types: string[] = [];
      for await (const event of inner.read({ continuity: "c1" })) types.push(event.type);
      return { ran, outcome, types };
    } finally {
      await cleanup();
    }
  }

  it("records its events after its intent, in order", async () => {
    const { ran, outcome, types } = await runPure(false);
    expect(ran).toEqual(["a1"]);
    expect(outcome.actions[0]).toMatchObject({ status: "succeeded" });
    expect(types).toEqual(["action.dispatched", "action.started", "action.succeeded"]);
  });

  it("leaves nothing of itself when the store refuses its intent", async () => {
    const { ran, outcome, types } = await runPure(true);
    expect(ran).toEqual(["a1"]);
    expect(types).toEqual([]);
    expect(outcome.errors.map((error) => error.code)).toEqual(["log.write-failed"]);
    expect(outcome.errors[0]!.message).toContain("action.dispatched");
  });
});
