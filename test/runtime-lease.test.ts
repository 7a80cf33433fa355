import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import {
  type AgentSpec,
  ContinuityLease,
  ContinuityLiveError,
  createAgentRuntime,
  type RunNotice,
} from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { collect } from "./support/events.js";

const TTL = 10_000;
const continuity = "home";
let dir: string;
let now: number;
let stores: EventStore[];

/** A connection to the test's store; all of them share one lease clock the test moves. */
async function connect(): Promise<EventStore> {
  const store = await openEventStore({
    db: join(dir, "store"),
    durability: "fast",
    leaseClock: () => now,
  });
  stores.push(store);
  return store;
}

/** A timer the test fires by hand: `tick()` renews every lease made with it. */
function manualTimer() {
  const ticks = new Set<() => void>();
  return {
    timer: (tick: () => void) => {
      ticks.add(tick);
      return { stop: () => ticks.delete(tick) };
    },
    tick: () => {
      for (const tick of ticks) tick();
    },
  };
}

const agent: AgentSpec = {
  directive: "tester",
  instructions: "Test things.",
  model: "claude-sonnet-4-5",
  limits: {},
  permits: () => true,
  tools: [],
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-lease-"));
  now = 1_000_000;
  stores = [];
});
afterEach(async () => {
  await Promise.all(stores.map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe("ContinuityLease", () => {
  it("is taken once, renewed on its timer, lost to a takeover after it lapses", async () => {
    const [a, b] = [await connect(), await connect()];
    const timers = manualTimer();
    const first = await ContinuityLease.take(a, continuity, {
      holder: "first",
      ttlMs: TTL,
      timer: timers.timer,
    });
    expect(first.token).toBe(1);
    const refused = await ContinuityLease.take(b, continuity, {
      holder: "second",
      ttlMs: TTL,
    }).catch((error) => error);
    expect(refused).toBeInstanceOf(ContinuityLiveError);
    expect(refused).toMatchObject({ code: "runtime.continuity-live", holder: "first" });
    expect(refused.message).toContain("running in another process (first)");

    // Renewed by its timer, it outlives its first time to live.
    now += TTL - 1;
    timers.tick();
    await first.renew();
    now += TTL - 1;
    expect((await b.lease(continuity))?.live).toBe(true);

    // Not renewed, it lapses; another process takes it, and the first finds it lost.
    now += TTL;
    const second = await ContinuityLease.take(b, continuity, { holder: "second", ttlMs: TTL });
    expect(second.token).toBe(2);
    const lost: unknown[] = [];
    first.onLost((answer) => lost.push(answer));
    await first.renew();
    expect(first.lost).toBe(true);
    expect(lost).toEqual([expect.objectContaining({ status: "lost", holder: "second" })]);
    // Releasing a lost lease leaves the new holder alone.
    await first.release();
    expect(await b.lease(continuity)).toMatchObject({ holder: "second", live: true });
    await second.release();
    expect(await b.lease(continuity)).toMatchObject({ holder: undefined, live: false });
  });
});

describe("a runtime with a lease", () => {
  const provider = () =>
    createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: ["<response>one</response>", "<response>two</response>"],
    });

  it("owns its continuities: another runtime is refused and appends nothing", async () => {
    const [a, b] = [await connect(), await connect()];
    const owner = createAgentRuntime({
      store: a,
      provider: provider(),
      agent,
      lease: { holder: "owner", ttlMs: TTL, timer: manualTimer().timer },
    });
    const other = createAgentRuntime({
      store: b,
      provider: provider(),
      agent,
      lease: { holder: "other", ttlMs: TTL, timer: manualTimer().timer },
    });
    expect(
      (await owner.submit(continuity, { text: "hi", actor: "ada", origin: "test" })).status,
    ).toBe("completed");
    const before = await b.head();
    for (const call of [
      () => other.submit(continuity, { text: "me too", actor: "bob", origin: "test" }),
      () => other.resume(continuity),
    ]) {
      const error = await call().catch((caught) => caught);
      expect(error).toBeInstanceOf(ContinuityLiveError);
      expect(error.holder).toBe("owner");
    }
    expect(await b.head()).toBe(before);
    await owner.close();
    // Released at close: the other takes over at once.
    expect(await other.resume(continuity)).toEqual([]);
    await other.close();
  });

  it("runs the turns other processes queue for it, each once, and tells its observer", async () => {
    const [a, c] = [await connect(), await connect()];
    const received: RunNotice[] = [];
    const owner = createAgentRuntime({
      store: a,
      provider: provider(),
      agent,
      lease: { holder: "owner", ttlMs: TTL, timer: manualTimer().timer },
      observer: (notice) => {
        if (notice.type === "turn-received") received.push(notice);
      },
    });
    await owner.submit(continuity, { text: "first", actor: "ada", origin: "test" });
    const queued = await c.append({
      continuity,
      type: "turn.added",
      actor: "bob",
      origin: "other process",
      data: { text: "second" },
    });
    const done = await waitFor(c, (event) => event.type === "run.completed", 2);
    const started = done.filter((event) => event.type === "run.started");
    expect(started.map((event) => (event.data as { turn?: string }).turn)).toContain(queued.id);
    // The owner's chat can show the question before its answer: who asked, and what.
    expect(received).toEqual([
      { type: "turn-received", continuity, turn: queued.id, actor: "bob", text: "second" },
    ]);
    // Resuming finds nothing left: the queued turn was taken once.
    expect(await owner.resume(continuity)).toEqual([]);
    await owner.close();
    const events = await collect(c.read({ continuity }));
    expect(events.filter((event) => event.type === "run.completed")).toHaveLength(2);
  });
});

describe("a runtime that loses its lease", () => {
  it("cancels the running step, and the store refuses what it appends after the takeover", async () => {
    const [a, b] = [await connect(), await connect()];
    let entered!: () => void;
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = defineTool({
      name: "slow.write",
      description: "Writes slowly.",
      parameters: z.object({}),
      sideEffects: true,
      execute: async (_input, { signal }) => {
        entered();
        await Promise.race([
          held,
          new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())),
        ]);
        return { wrote: true };
      },
    });
    const timers = manualTimer();
    const owner = createAgentRuntime({
      store: a,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: [
          '<action type="tool" mode="sync" id="w1">{"name":"slow.write","parameters":{}}</action>',
          "<response>after</response>",
        ],
        loop: true,
      }),
      agent: { ...agent, tools: [slow] },
      lease: { holder: "owner", ttlMs: TTL, timer: timers.timer },
    });
    const running = owner.submit(continuity, { text: "write", actor: "ada", origin: "test" }).then(
      (result) => result,
      (error: unknown) => error,
    );
    await inTool;
    now += 2 * TTL;
    await ContinuityLease.take(b, continuity, { holder: "successor", ttlMs: TTL });
    const head = await b.head();
    timers.tick(); // the owner's renewal finds the lease lost and cancels the step
    const outcome = await running;
    release();
    expect(
      outcome instanceof Error
        ? (outcome as { code?: string }).code
        : (outcome as { status: string }).status,
    ).toMatch(/^(store\.lease-lost|cancelled)$/);
    // Nothing the old owner tried to append after the takeover was stored.
    expect(await b.head()).toBe(head);
    const next = await owner
      .submit(continuity, { text: "again", actor: "ada", origin: "test" })
      .catch((error) => error);
    expect(next.code).toBe("store.lease-lost");
    await owner.close();
  });
});

describe("turns accepted back to back while a run goes on", () => {
  it("are queued behind it at positions 1 and 2, as a replay accepting them at once derives", async () => {
    const a = await connect();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const wait = defineTool({
      name: "wait",
      description: "Waits.",
      parameters: z.object({}),
      execute: async () => {
        entered();
        await held;
        return {};
      },
    });
    const runtime = createAgentRuntime({
      store: a,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: [
          '<action type="tool" mode="sync" id="w1">{"name":"wait","parameters":{}}</action>',
          "<response>done</response>",
        ],
        loop: true,
      }),
      agent: { ...agent, tools: [wait] },
    });
    const first = runtime.submit(continuity, { text: "first", actor: "ada", origin: "test" });
    await inTool;
    const turns = await a.appendBatch(
      ["second", "third"].map((text) => ({
        continuity,
        type: "turn.added",
        actor: "bob",
        origin: "test",
        data: { text },
      })),
    );
    const later = turns.map((turn) => runtime.accept(continuity, turn.id));
    release();
    await Promise.all([first, ...later]);
    const queued = (await collect(a.read({ continuity, types: ["turn.queued"] }))).map(
      (event) => event.data as { turn: string; position: number },
    );
    expect(queued).toEqual([
      expect.objectContaining({ turn: turns[0]!.id, position: 1 }),
      expect.objectContaining({ turn: turns[1]!.id, position: 2 }),
    ]);
    await runtime.close();
  });
});

/** The continuity's events up to the `count`-th that matches `match`, following live. */
async function waitFor(
  store: EventStore,
  match: (event: SpoolEvent) => boolean,
  count: number,
): Promise<SpoolEvent[]> {
  const events: SpoolEvent[] = [];
  let seen = 0;
  for await (const message of store.subscribe({ continuity })) {
    if (message.type !== "event") continue;
    events.push(message.event);
    if (match(message.event) && ++seen === count) break;
  }
  return events;
}
