import { describe, expect, it } from "vitest";
import {
  createInternalExecutor,
  createVariableStore,
  type InternalActionsPolicy,
} from "../src/actions/index.js";
import {
  createFeedEngine,
  FEED_ACTION_NAMES,
  FeedError,
  type FeedManifest,
  feedInternalActions,
  parseFeedManifest,
} from "../src/feeds/index.js";
import { fakeExecutor, fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

const manifest: FeedManifest = {
  feeds: [
    {
      id: "system_metrics",
      type: "periodic",
      interval: 30,
      source: { type: "tool", name: "system_monitor_tool", params: {} },
    },
  ],
  disabled: [],
  internalActions: { enabled: true },
  environment: { allow: [], allowSecrets: [] },
};

/**
 * A started engine (the engine's own log: `log`) and the actions' internal executor over its feed
 * actions, recording to a separate step log (`step`), as the scheduler would wire them.
 */
async function setup(policy: InternalActionsPolicy = manifest.internalActions) {
  const time = fakeTime();
  const log = memoryFeedLog(time.clock);
  const step = memoryFeedLog(time.clock);
  let n = 0;
  const tool = fakeExecutor("tool", (call) => `${call.name} #${++n}`);
  const relic = fakeExecutor("relic", (call) => ({ errors: [`${call.parameters.filter}`] }));
  const engine = createFeedEngine({
    manifest,
    log: log.log,
    executors: [tool, relic],
    clock: time.clock,
    timers: time.timers,
  });
  await engine.start();
  await time.advance(0);
  const actions = feedInternalActions(engine);
  const internal = createInternalExecutor({
    actions,
    policy,
    variables: createVariableStore(),
    log: step.log,
  });
  /** Runs an internal action as the scheduler does once it has passed `check`. */
  const run = (name: string, parameters: Record<string, unknown>, actionId = "a1") =>
    internal.execute({
      actionId,
      type: "internal",
      name,
      parameters,
      attempt: 1,
      signal: new AbortController().signal,
      progress: () => {},
    });
  return { time, log, step, tool, relic, engine, actions, internal, run };
}

async function rejection(promise: Promise<unknown>): Promise<FeedError> {
  const error = await promise.then(
    () => undefined,
    (rejected: unknown) => rejected,
  );
  expect(error).toBeInstanceOf(FeedError);
  return error as FeedError;
}

describe("feed internal actions", () => {
  it("are add_context_feed, remove_context_feed and update_context_feed, runnable by the internal executor", async () => {
    const { actions, internal } = await setup();
    expect(actions.map((action) => action.name)).toEqual([...FEED_ACTION_NAMES]);
    for (const action of actions) {
      expect(action.description.length).toBeGreaterThan(10);
      expect(internal.canRun?.(action.name)).toBe(true);
    }
  });

  it("add_context_feed takes the seed's definition and records feed.added on the step's log", async () => {
    const { log, step, engine, run, relic } = await setup();
    const before = log.events.length;
    const params = {
      id: "recent_errors",
      type: "on_demand",
      source: { type: "relic", name: "log_service", params: { filter: "ERROR", since: "1h" } },
    };
    expect(await run("add_context_feed", params, "add_feed")).toEqual({
      id: "recent_errors",
      status: "added",
      type: "on_demand",
    });
    expect(step.events).toEqual([
      {
        type: "feed.added",
        data: {
          feed_id: "recent_errors",
          definition: {
            id: "recent_errors",
            type: "on_demand",
            source: {
              type: "relic",
              name: "log_service",
              params: { filter: "ERROR", since: "1h" },
            },
          },
          by: "action",
          action_id: "add_feed",
        },
        ts: "2024-06-15T12:34:56.000Z",
      },
    ]);
    expect(log.events.length).toBe(before);
    expect(relic.calls).toHaveLength(0); // on_demand: fetched when a step resolves it
    const snapshot = await engine.resolve(["recent_errors"]);
    expect(snapshot[0]!.value).toBe('{\n  "errors": [\n    "ERROR"\n  ]\n}');
    expect(log.types().at(-1)).toBe("feed.refreshed"); // refreshes go to the engine's log
  });

  it("add_context_feed of a periodic feed starts its refreshes at once", async () => {
    const { time, tool, run } = await setup();
    await run("add_context_feed", {
      id: "docker_status",
      type: "periodic",
      interval: 60,
      source: { type: "tool", name: "docker_ps" },
    });
    await time.advance(0);
    expect(tool.calls.map((call) => call.name)).toEqual(["system_monitor_tool", "docker_ps"]);
    expect(time.intervals().sort()).toEqual([30_000, 60_000]);
  });

  it("add_context_feed refuses a duplicate id and an invalid definition, recording nothing", async () => {
    const { step, internal, run } = await setup();
    const duplicate = await rejection(
      run("add_context_feed", {
        id: "system_metrics",
        type: "on_demand",
        source: { type: "tool", name: "x" },
      }),
    );
    expect(duplicate.code).toBe("feed.duplicate");
    expect(duplicate.message).toBe(
      'a context feed "system_metrics" already exists. Choose another id, or change that feed with update_context_feed',
    );
    // The executor's check refuses bad parameters before dispatch, naming the field.
    expect(
      internal.check?.("add_context_feed", {
        id: "x",
        type: "periodic",
        source: { type: "tool", name: "x" },
      }),
    ).toEqual({
      reason: "bad-parameters",
      message:
        'bad parameters for internal action "add_context_feed": interval: must be a positive number of seconds for a periodic feed; it is missing. Call it again with parameters that match its schema.',
    });
    expect(step.events).toEqual([]);
  });

  it("the engine refuses an invalid definition from any caller", async () => {
    const { engine } = await setup();
    const invalid = await rejection(
      engine.add({ id: "x", type: "periodic", source: { type: "tool", name: "x" } }),
    );
    expect(invalid.code).toBe("feed.invalid");
    expect(invalid.message).toBe(
      "the feed definition is invalid: interval: must be a positive number of seconds for a periodic feed; it is missing",
    );
  });

  it("remove_context_feed removes a feed, stops its timer and records feed.removed", async () => {
    const { time, step, tool, engine, run } = await setup();
    expect(time.count()).toBe(1);
    expect(await run("remove_context_feed", { id: "system_metrics" }, "remove_feed")).toEqual({
      id: "system_metrics",
      status: "removed",
    });
    expect(step.events).toEqual([
      {
        type: "feed.removed",
        data: { feed_id: "system_metrics", by: "action", action_id: "remove_feed" },
        ts: "2024-06-15T12:34:56.000Z",
      },
    ]);
    expect(time.count()).toBe(0);
    expect(engine.snapshot()).toEqual([]);
    await time.advance(120_000);
    expect(tool.calls).toHaveLength(1);
  });

  it("remove_context_feed of an unknown id names the feeds there are", async () => {
    const { run } = await setup();
    const error = await rejection(run("remove_context_feed", { id: "recent_errors" }));
    expect(error.code).toBe("feed.unknown");
    expect(error.message).toBe(
      'there is no context feed "recent_errors" (feeds: system_metrics). Use one of the existing ids, or add the feed with add_context_feed',
    );
  });

  it("update_context_feed changes the interval (the seed's 30 s to 60 s) and reschedules", async () => {
    const { time, step, tool, run } = await setup();
    expect(
      await run("update_context_feed", { id: "system_metrics", interval: 60 }, "update_feed"),
    ).toEqual({
      id: "system_metrics",
      status: "updated",
      changed: ["interval"],
    });
    expect(step.of("feed.updated")).toEqual([
      {
        feed_id: "system_metrics",
        changes: { interval: 60 },
        by: "action",
        action_id: "update_feed",
      },
    ]);
    expect(time.intervals()).toEqual([60_000]);
    await time.advance(30_000);
    expect(tool.calls).toHaveLength(1);
    await time.advance(30_000);
    expect(tool.calls).toHaveLength(2);
  });

  it("update_context_feed switches periodic to on_demand (dropping interval) and back", async () => {
    const { time, step, tool, engine, run } = await setup();
    await run("update_context_feed", { id: "system_metrics", type: "on_demand", cache_ttl: 120 });
    expect(step.events.at(-1)!.data.changes).toEqual({
      type: "on_demand",
      interval: null,
      cache_ttl: 120,
    });
    expect(engine.definitions()[0]).toEqual({
      id: "system_metrics",
      type: "on_demand",
      cache_ttl: 120,
      source: { type: "tool", name: "system_monitor_tool", params: {} },
    });
    expect(time.count()).toBe(0);
    await time.advance(120_000);
    expect(tool.calls).toHaveLength(1);

    await run("update_context_feed", { id: "system_metrics", type: "periodic", interval: 10 });
    expect(step.events.at(-1)!.data.changes).toEqual({
      type: "periodic",
      interval: 10,
      cache_ttl: null,
    });
    await time.advance(0);
    expect(tool.calls).toHaveLength(2); // refreshed at once on becoming periodic
    await time.advance(10_000);
    expect(tool.calls).toHaveLength(3);
  });

  it("update_context_feed merges a partial source and refreshes a periodic feed from it", async () => {
    const { time, tool, engine, run } = await setup();
    await run("update_context_feed", {
      id: "system_metrics",
      source: { params: { metrics: ["disk"] } },
    });
    await time.advance(0);
    expect(tool.calls.at(-1)!.parameters).toEqual({ metrics: ["disk"] });
    expect(engine.definitions()[0]!.source).toEqual({
      type: "tool",
      name: "system_monitor_tool",
      params: { metrics: ["disk"] },
    });
    await run("update_context_feed", {
      id: "system_metrics",
      source: { type: "internal", action: "system_clock" },
    });
    await time.advance(0);
    expect(engine.snapshot()[0]!.value).toBe("2024-06-15T12:34:56Z");
  });

  it("update_context_feed errors: unknown id, nothing to change, an invalid result, a typo", async () => {
    const { run, internal } = await setup();
    expect((await rejection(run("update_context_feed", { id: "nope", interval: 5 }))).code).toBe(
      "feed.unknown",
    );
    expect((await rejection(run("update_context_feed", { id: "system_metrics" }))).message).toBe(
      'the update of feed "system_metrics" names no field to change. Give at least one of type, interval, cache_ttl, max_tokens, source',
    );
    const invalid = await rejection(
      run("update_context_feed", { id: "system_metrics", cache_ttl: 60 }),
    );
    expect(invalid.message).toBe(
      'update_context_feed would make feed "system_metrics" invalid: cache_ttl: applies only to on_demand feeds (a periodic feed is refreshed every interval); remove it',
    );
    const removeInterval = await rejection(
      run("update_context_feed", { id: "system_metrics", interval: null }),
    );
    expect(removeInterval.message).toContain(
      "interval: must be a positive number of seconds for a periodic feed; it is missing",
    );
    expect(internal.check?.("update_context_feed", { id: "system_metrics", intervall: 5 })).toEqual(
      {
        reason: "bad-parameters",
        message:
          'bad parameters for internal action "update_context_feed": (parameters): unknown field "intervall": update_context_feed takes id, type, interval, cache_ttl, max_tokens, source. Call it again with parameters that match its schema.',
      },
    );
  });

  it("update_context_feed with the values a feed already has records nothing", async () => {
    const { step, run } = await setup();
    expect(await run("update_context_feed", { id: "system_metrics", interval: 30 })).toEqual({
      id: "system_metrics",
      status: "unchanged",
      changed: [],
    });
    expect(step.events).toEqual([]);
  });

  it("the manifest's internal_actions policy, passed to the executor, decides which may run (the seed's security section)", async () => {
    const parsed = parseFeedManifest(
      "internal_actions:\n  enabled: true\n  allowed_actions: [add_context_feed, remove_context_feed]\n",
      { env: {} },
    );
    const { internal } = await setup(parsed.internalActions);
    expect(internal.check?.("remove_context_feed", { id: "system_metrics" })).toBeUndefined();
    expect(
      internal.check?.("update_context_feed", { id: "system_metrics", interval: 60 }),
    ).toMatchObject({
      reason: "not-allowed",
    });
    const off = await setup({ enabled: false });
    expect(off.internal.check?.("add_context_feed", {})).toMatchObject({ reason: "not-allowed" });
  });
});
