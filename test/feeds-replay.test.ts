import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  createFeedEngine,
  eventStoreFeedLog,
  FEED_EVENT_TYPES,
  type FeedDefinition,
  type FeedEngine,
  type FeedLog,
  type FeedManifest,
  feedProjection,
  replayFeeds,
} from "../src/feeds/index.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { collect } from "./support/events.js";
import { fakeExecutor, fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

const clockFeed: FeedDefinition = {
  id: "current_datetime",
  type: "on_demand",
  source: { type: "internal", action: "system_clock", params: {} },
};
const metrics: FeedDefinition = {
  id: "system_metrics",
  type: "periodic",
  interval: 30,
  source: { type: "tool", name: "system_monitor_tool", params: {} },
};
const docs: FeedDefinition = {
  id: "project_docs",
  type: "on_demand",
  cache_ttl: 3600,
  max_tokens: 5,
  source: { type: "workflow", name: "doc_aggregator", params: { paths: ["docs/"] } },
};

const manifestOf = (...feeds: FeedDefinition[]): FeedManifest => ({
  feeds,
  disabled: [],
  internalActions: { enabled: true },
  environment: { allow: [], allowSecrets: [] },
});

/** Sources that answer differently on every call and fail every fourth time. */
function sources() {
  let n = 0;
  const answer = (name: string) => {
    n++;
    if (n % 4 === 0) throw new Error(`${name} failed (${n})`);
    return { name, n };
  };
  return [
    fakeExecutor("tool", (call) => answer(call.name)),
    fakeExecutor("workflow", (call) => `${call.name} says ${"long text ".repeat(n++)}`),
    fakeExecutor("relic", (call) => answer(call.name)),
  ];
}

/**
 * A run that touches every kind of event: start, ticks, steps, failures, changes by the model
 * (recorded to `stepLog`, as an internal action records to its step's log), stop.
 */
async function liveRun(
  engine: FeedEngine,
  advance: (ms: number) => Promise<void>,
  stepLog?: FeedLog,
) {
  const byModel = (actionId: string) => ({
    by: "action" as const,
    actionId,
    ...(stepLog ? { log: stepLog } : {}),
  });
  await engine.start();
  await advance(0);
  await engine.resolve(undefined, { step: "s1" });
  await advance(30_000);
  await engine.resolve(undefined, { step: "s2" });
  await engine.add(
    {
      id: "recent_errors",
      type: "on_demand",
      source: { type: "relic", name: "log_service", params: { filter: "ERROR" } },
    },
    byModel("add_feed"),
  );
  await advance(60_000);
  await engine.resolve(undefined, { step: "s3" });
  await engine.update({ id: "system_metrics", interval: 60 }, byModel("update_feed"));
  await engine.update({ id: "recent_errors", type: "periodic", interval: 10 }, byModel("u2"));
  await advance(45_000);
  await engine.resolve(undefined, { step: "s4" });
  await engine.remove("current_datetime", byModel("remove_feed"));
  await engine.update({ id: "project_docs", source: { params: { paths: ["README.md"] } } });
  await engine.resolve(undefined, { step: "s5" });
  await advance(60_000);
  await engine.stop();
}

describe("replayFeeds", () => {
  it("rebuilds exactly the live registry from the recorded events, calling no source", async () => {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const executors = sources();
    const engine = createFeedEngine({
      manifest: manifestOf(clockFeed, metrics, docs),
      log: log.log,
      executors,
      clock: time.clock,
      timers: time.timers,
    });
    await liveRun(engine, time.advance);
    expect(new Set(log.types())).toEqual(new Set(FEED_EVENT_TYPES));
    const calls = executors.map((executor) => executor.calls.length);

    const replayed = replayFeeds(log.events);
    expect(replayed).toEqual(engine.state());
    expect([...replayed.feeds.keys()]).toEqual(["system_metrics", "project_docs", "recent_errors"]);
    expect(replayed.feeds.get("project_docs")!.value).toBeDefined();
    expect(executors.map((executor) => executor.calls.length)).toEqual(calls);
  });

  it("skips events of other types and feeds it does not know", () => {
    const state = replayFeeds([
      { type: "turn.added", data: { text: "hi" } },
      {
        type: "feed.refreshed",
        data: {
          feed_id: "ghost",
          value: "x",
          truncated: false,
          tokens: 1,
          duration_ms: 0,
          trigger: "initial",
        },
      },
      { type: "feed.removed", data: { feed_id: "ghost", by: "action" } },
    ]);
    expect(state.feeds.size).toBe(0);
  });

  it("property: any sequence of changes, refreshes and failures replays to the live state", async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 90_000 }) }),
      fc.record({
        kind: fc.constant("resolve" as const),
        step: fc.constantFrom("a", "b", undefined),
      }),
      fc.record({
        kind: fc.constant("add" as const),
        id: fc.constantFrom("f1", "f2", "f3"),
        periodic: fc.boolean(),
        ttl: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant("update" as const),
        id: fc.constantFrom("f1", "f2", "f3"),
        interval: fc.integer({ min: 1, max: 60 }),
      }),
      fc.record({ kind: fc.constant("remove" as const), id: fc.constantFrom("f1", "f2", "f3") }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const time = fakeTime();
        const log = memoryFeedLog(time.clock);
        const engine = createFeedEngine({
          log: log.log,
          executors: sources(),
          clock: time.clock,
          timers: time.timers,
        });
        await engine.start();
        for (const step of ops) {
          const ignore = () => undefined;
          switch (step.kind) {
            case "advance":
              await time.advance(step.ms);
              break;
            case "resolve":
              await engine.resolve(undefined, step.step ? { step: step.step } : {});
              break;
            case "add":
              await engine
                .add({
                  id: step.id,
                  type: step.periodic ? "periodic" : "on_demand",
                  ...(step.periodic ? { interval: 20 } : step.ttl ? { cache_ttl: step.ttl } : {}),
                  source: { type: "tool", name: step.id },
                })
                .catch(ignore);
              break;
            case "update":
              await engine
                .update({ id: step.id, type: "periodic", interval: step.interval })
                .catch(ignore);
              break;
            case "remove":
              await engine.remove(step.id).catch(ignore);
              break;
          }
        }
        await engine.stop();
        expect(replayFeeds(log.events)).toEqual(engine.state());
      }),
      { numRuns: 60 },
    );
  });
});

describe("replay from a real SQLite log", () => {
  let dir: string | undefined;
  let store: EventStore | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("gives the live state, and a resumed engine reconciles it with a changed manifest", async () => {
    dir = mkdtempSync(join(tmpdir(), "spool-feeds-"));
    const time = fakeTime();
    const now = () => new Date(time.clock.now()).toISOString();
    const open = () => openEventStore({ db: dir, durability: "fast", defaults: { now } });
    store = await open();
    const log = eventStoreFeedLog(store, { continuity: "c1" });
    const engine = createFeedEngine({
      manifest: manifestOf(clockFeed, metrics, docs),
      log,
      executors: sources(),
      clock: time.clock,
      timers: time.timers,
    });
    const advance = async (ms: number) => {
      await time.advance(ms);
      await engine.idle();
    };
    const stepLog = eventStoreFeedLog(store, {
      continuity: "c1",
      stream: { kind: "step", id: "s3" },
    });
    await liveRun(engine, advance, stepLog);

    const events = await collect(store.read({ continuity: "c1" }));
    expect(events.length).toBeGreaterThan(10);
    expect(
      events.filter((event) => event.stream.kind === "step").map((event) => event.type),
    ).toEqual(["feed.added", "feed.updated", "feed.updated", "feed.removed"]);
    expect(replayFeeds(events)).toEqual(engine.state());
    await store.close();

    // A new process: fold the log, resume, with a manifest that dropped the clock (already
    // removed by the model), changed the docs feed and added a new one.
    store = await open();
    const folded = await store.fold({ continuity: "c1", types: FEED_EVENT_TYPES }, feedProjection);
    expect(folded).toEqual(engine.state());
    const executors = sources();
    const resumedLog = eventStoreFeedLog(store, { continuity: "c1" });
    const recorded: string[] = [];
    const watchingLog: FeedLog = {
      record: (type, data) => {
        recorded.push(
          `${type} ${(data as { feed_id: string }).feed_id} by ${(data as { by?: string }).by ?? "-"}`,
        );
        return resumedLog.record(type, data);
      },
    };
    const resumed = createFeedEngine({
      manifest: manifestOf(clockFeed, metrics, { ...docs, max_tokens: 50 }),
      state: folded,
      log: watchingLog,
      executors,
      clock: time.clock,
      timers: time.timers,
    });
    expect(resumed.snapshot()).toEqual(engine.snapshot());
    expect(executors.map((executor) => executor.calls.length)).toEqual([0, 0, 0]);
    await resumed.start();
    await resumed.idle();
    expect(recorded.slice(0, 3)).toEqual([
      "feed.added current_datetime by manifest",
      "feed.updated system_metrics by manifest", // the model's interval change yields to the manifest
      "feed.updated project_docs by manifest",
    ]);
    expect(resumed.definitions().map((feed) => feed.id)).toEqual([
      "system_metrics",
      "project_docs",
      "recent_errors",
      "current_datetime",
    ]);
    await resumed.stop();
    const all = await collect(store.read({ continuity: "c1" }));
    expect(replayFeeds(all)).toEqual(resumed.state());
  });
});
