import { describe, expect, it } from "vitest";
import { createFeedEngine, type FeedDefinition } from "../src/feeds/index.js";
import { deferred, fakeExecutor, fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

const expensive: FeedDefinition = {
  id: "expensive_data",
  type: "on_demand",
  cache_ttl: 300,
  source: { type: "tool", name: "expensive_api_call", params: {} },
};
const tree: FeedDefinition = {
  id: "journal_tree",
  type: "on_demand",
  source: { type: "tool", name: "filesystem", params: { path: "/j" } },
};

function setup(run: () => unknown) {
  const time = fakeTime();
  const log = memoryFeedLog(time.clock);
  let n = 0;
  const tool = fakeExecutor("tool", () => run() ?? `value ${++n}`);
  const engine = createFeedEngine({
    log: log.log,
    executors: [tool],
    clock: time.clock,
    timers: time.timers,
  });
  return { time, log, tool, engine };
}

describe("on_demand feeds and cache_ttl", () => {
  it("reuse a value for cache_ttl seconds and fetch again once it has passed", async () => {
    const { time, log, tool, engine } = setup(() => undefined);
    await engine.add(expensive);
    expect(tool.calls).toHaveLength(0); // on_demand: nothing fetched until a step needs it
    expect((await engine.resolve(["expensive_data"]))[0]!.value).toBe("value 1");
    await time.advance(299_999);
    expect((await engine.resolve(["expensive_data"]))[0]!.value).toBe("value 1");
    expect(tool.calls).toHaveLength(1);
    await time.advance(1);
    expect((await engine.resolve(["expensive_data"]))[0]!.value).toBe("value 2");
    expect(tool.calls).toHaveLength(2);
    expect(log.of("feed.refreshed").map((data) => data.trigger)).toEqual([
      "on_demand",
      "on_demand",
    ]);
  });

  it("without cache_ttl, fetch once per step", async () => {
    const { tool, engine } = setup(() => undefined);
    await engine.add(tree);
    await engine.resolve(undefined, { step: "s1" });
    await engine.resolve(undefined, { step: "s1" });
    expect(tool.calls).toHaveLength(1);
    expect((await engine.resolve(undefined, { step: "s2" }))[0]!.value).toBe("value 2");
    expect(tool.calls).toHaveLength(2);
    await engine.resolve(); // no step given: every call is a step of its own
    await engine.resolve();
    expect(tool.calls).toHaveLength(4);
  });

  it("share one fetch between concurrent requests", async () => {
    const answer = deferred<string>();
    const { tool, engine } = setup(() => answer.promise);
    await engine.add(tree);
    const first = engine.resolve(["journal_tree"], { step: "a" });
    const second = engine.resolve(["journal_tree"], { step: "b" });
    answer.resolve("tree");
    expect((await first)[0]!.value).toBe("tree");
    expect((await second)[0]!.value).toBe("tree");
    expect(tool.calls).toHaveLength(1);
  });

  it("resolve only the ids asked for, ignoring unknown ones", async () => {
    const { tool, engine } = setup(() => undefined);
    await engine.add(tree);
    await engine.add(expensive);
    const snapshot = await engine.resolve(["expensive_data", "no_such_feed"]);
    expect(snapshot.map((entry) => entry.id)).toEqual(["expensive_data"]);
    expect(tool.calls.map((call) => call.name)).toEqual(["expensive_api_call"]);
  });

  it("keep serving the last value after a failed fetch and try again at the next step", async () => {
    let call = 0;
    const { time, log, engine } = setup(() => {
      call++;
      if (call === 2) throw new Error("api down");
      return `value ${call}`;
    });
    await engine.add(expensive);
    await engine.resolve();
    await time.advance(300_000);
    const stale = await engine.resolve();
    expect(stale[0]).toMatchObject({
      value: "value 1",
      error: { code: "feed.source-failed", message: "api down" },
    });
    expect(log.of("feed.failed")[0]).toMatchObject({ trigger: "on_demand" });
    const fresh = await engine.resolve();
    expect(fresh[0]!.value).toBe("value 3");
    expect(fresh[0]!.error).toBeUndefined();
  });

  it("drop a cached value when the source changes", async () => {
    const { tool, engine } = setup(() => undefined);
    await engine.add(expensive);
    await engine.resolve();
    await engine.update({ id: "expensive_data", source: { params: { region: "eu" } } });
    expect(engine.snapshot()[0]!.value).toBeUndefined();
    expect((await engine.resolve())[0]!.value).toBe("value 2");
    expect(tool.calls[1]!.parameters).toEqual({ region: "eu" });
  });

  it("turning caching off with cache_ttl: null fetches at the next step", async () => {
    const { tool, engine } = setup(() => undefined);
    await engine.add(expensive);
    await engine.resolve(undefined, { step: "s1" });
    await engine.update({ id: "expensive_data", cache_ttl: null });
    await engine.resolve(undefined, { step: "s2" });
    expect(tool.calls).toHaveLength(2);
  });
});
