import { describe, expect, it } from "vitest";
import {
  createFeedEngine,
  type FeedDefinition,
  type FeedManifest,
  renderFeeds,
} from "../src/feeds/index.js";
import { deferred, fakeExecutor, fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

const metrics: FeedDefinition = {
  id: "system_metrics",
  type: "periodic",
  interval: 30,
  source: { type: "tool", name: "system_monitor_tool", params: { metrics: ["cpu", "memory"] } },
};

const manifestOf = (...feeds: FeedDefinition[]): FeedManifest => ({
  feeds,
  disabled: [],
  internalActions: { enabled: true },
  environment: { allow: [], allowSecrets: [] },
});

/** An engine over fake time whose tool answers with `run`. */
function setup(run: (call: { attempt: number }) => unknown, feeds = [metrics]) {
  const time = fakeTime();
  const log = memoryFeedLog(time.clock);
  const tool = fakeExecutor("tool", run);
  const errors: unknown[] = [];
  const engine = createFeedEngine({
    manifest: manifestOf(...feeds),
    log: log.log,
    executors: [tool],
    clock: time.clock,
    timers: time.timers,
    sourceTimeoutMs: 5_000,
    onError: (error) => errors.push(error),
  });
  return { time, log, tool, engine, errors };
}

describe("periodic feeds", () => {
  it("refresh at start and then every interval, through the tool executor", async () => {
    let cpu = 40;
    const { time, log, tool, engine, errors } = setup(() => ({ cpu: cpu++, memory: 62.8 }));
    await engine.start();
    await time.advance(0);
    expect(tool.calls).toHaveLength(1);
    await time.advance(29_999);
    expect(tool.calls).toHaveLength(1);
    await time.advance(1);
    expect(tool.calls).toHaveLength(2);
    await time.advance(60_000);
    expect(tool.calls).toHaveLength(4);

    expect(log.types()).toEqual([
      "feed.added",
      "feed.refreshed",
      "feed.refreshed",
      "feed.refreshed",
      "feed.refreshed",
    ]);
    expect(log.of("feed.refreshed").map((data) => data.trigger)).toEqual([
      "initial",
      "periodic",
      "periodic",
      "periodic",
    ]);
    expect(log.of("feed.refreshed")[3]).toEqual({
      feed_id: "system_metrics",
      value: '{\n  "cpu": 43,\n  "memory": 62.8\n}',
      truncated: false,
      tokens: 9, // 33 ASCII characters / 4, rounded up
      duration_ms: 0,
      trigger: "periodic",
    });
    expect(engine.snapshot()[0]!.value).toBe('{\n  "cpu": 43,\n  "memory": 62.8\n}');
    expect(errors).toEqual([]);
  });

  it("call the executor as the action feed:<id>, attempt 1, with the params and a live signal", async () => {
    const { time, tool, engine } = setup(() => "ok");
    await engine.start();
    await time.advance(0);
    const call = tool.calls[0]!;
    expect(call).toMatchObject({
      actionId: "feed:system_metrics",
      type: "tool",
      name: "system_monitor_tool",
      parameters: { metrics: ["cpu", "memory"] },
      attempt: 1,
    });
    expect(call.signal.aborted).toBe(false);
    expect(() => call.progress({ partial: true })).not.toThrow();
  });

  it("record nothing when a tick brings the same value again", async () => {
    const { time, log, tool, engine } = setup(() => "steady");
    await engine.start();
    await time.advance(90_000);
    expect(tool.calls).toHaveLength(4);
    expect(log.types()).toEqual(["feed.added", "feed.refreshed"]);
  });

  it("never start a refresh while one is running: a step waits for the one in flight", async () => {
    const first = deferred<string>();
    const { time, log, tool, engine } = setup(() => first.promise);
    await engine.start();
    await time.advance(0); // the initial refresh starts and hangs
    const step = engine.resolve();
    await time.advance(1_000);
    expect(tool.calls).toHaveLength(1);
    first.resolve("v1");
    expect((await step)[0]!.value).toBe("v1");
    expect(tool.calls).toHaveLength(1);
    expect(log.of("feed.refreshed").map((data) => data.trigger)).toEqual(["initial"]);
  });

  it("skip ticks while a slow refresh runs, then go on", async () => {
    const slow = deferred<string>();
    let calls = 0;
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const tool = fakeExecutor("tool", () => (++calls === 1 ? slow.promise : `v${calls}`));
    const engine = createFeedEngine({
      manifest: manifestOf(metrics),
      log: log.log,
      executors: [tool],
      clock: time.clock,
      timers: time.timers,
      sourceTimeoutMs: 600_000,
    });
    await engine.start();
    await time.advance(95_000); // ticks at 30, 60, 90 s all find the first refresh running
    expect(tool.calls).toHaveLength(1);
    slow.resolve("v1");
    await time.advance(25_000);
    expect(tool.calls).toHaveLength(2);
    expect(log.of("feed.refreshed").map((data) => [data.value, data.duration_ms])).toEqual([
      ["v1", 95_000],
      ["v2", 0],
    ]);
  });

  it("keep the last good value when a refresh fails, log each new failure once, and recover", async () => {
    let call = 0;
    const { time, log, engine } = setup(() => {
      call++;
      if (call === 2 || call === 3) throw new Error("monitor unreachable");
      if (call === 4) throw new Error("monitor crashed");
      return `reading ${call}`;
    });
    await engine.start();
    await time.advance(0);
    await time.advance(30_000);
    expect(engine.snapshot()[0]).toMatchObject({
      value: "reading 1",
      error: { code: "feed.source-failed", message: "monitor unreachable" },
    });
    expect(renderFeeds(engine.snapshot())).toBe(
      '<context_feed id="system_metrics" status="stale" error="feed.source-failed">\nreading 1\n</context_feed>',
    );
    await time.advance(30_000); // the same failure again: not logged again
    await time.advance(30_000); // a different failure
    await time.advance(30_000); // recovers
    expect(log.types()).toEqual([
      "feed.added",
      "feed.refreshed",
      "feed.failed",
      "feed.failed",
      "feed.refreshed",
    ]);
    expect(log.of("feed.failed")).toEqual([
      {
        feed_id: "system_metrics",
        error: { code: "feed.source-failed", message: "monitor unreachable" },
        duration_ms: 0,
        trigger: "periodic",
      },
      {
        feed_id: "system_metrics",
        error: { code: "feed.source-failed", message: "monitor crashed" },
        duration_ms: 0,
        trigger: "periodic",
      },
    ]);
    expect(engine.snapshot()[0]).toEqual({
      id: "system_metrics",
      type: "periodic",
      value: "reading 5",
      tokens: 3,
      truncated: false,
      refreshedAt: "2024-06-15T12:36:56.000Z",
    });
  });

  it("fail a source that does not answer in time with feed.timeout, keeping the value", async () => {
    let call = 0;
    const { time, log, engine } = setup(() => (++call === 1 ? "first" : new Promise(() => {})));
    await engine.start();
    await time.advance(30_000);
    await time.advance(5_000);
    expect(log.of("feed.failed")).toEqual([
      {
        feed_id: "system_metrics",
        error: {
          code: "feed.timeout",
          message:
            'feed "system_metrics": its tool source did not answer within 5000 ms. Make the source faster, or raise sourceTimeoutMs in createFeedEngine',
          retryable: true,
        },
        duration_ms: 5_000,
        trigger: "periodic",
      },
    ]);
    expect(engine.snapshot()[0]!.value).toBe("first");
  });

  it("record feed.failed saying which executor to register when there is none", async () => {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const engine = createFeedEngine({
      manifest: manifestOf(metrics),
      log: log.log,
      clock: time.clock,
      timers: time.timers,
    });
    await engine.start();
    await time.advance(0);
    expect(log.of("feed.failed")[0]!.error).toEqual({
      code: "feed.no-executor",
      message:
        'feed "system_metrics": no tool executor is registered, so tool "system_monitor_tool" cannot run. Register an ActionExecutor with type "tool" in createFeedEngine({ executors })',
    });
    expect(renderFeeds(engine.snapshot())).toContain(
      'status="unavailable" error="feed.no-executor"',
    );
    await engine.stop();
  });

  it("record feed.failed when the executor does not know the name", async () => {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const tool = fakeExecutor(
      "tool",
      () => "x",
      (name) => name === "other",
    );
    const engine = createFeedEngine({
      manifest: manifestOf(metrics),
      log: log.log,
      executors: [tool],
      clock: time.clock,
      timers: time.timers,
    });
    await engine.start();
    await time.advance(0);
    expect(tool.calls).toEqual([]);
    expect(log.of("feed.failed")[0]!.error).toMatchObject({ code: "feed.unknown-source" });
    await engine.stop();
  });

  it("stop clears every timer and abandons the refresh in flight", async () => {
    const hanging = deferred<string>();
    const clock = {
      ...metrics,
      id: "clock",
      interval: 1,
      source: { type: "internal", action: "system_clock", params: {} },
    } as FeedDefinition;
    const { time, log, tool, engine } = setup(() => hanging.promise, [metrics, clock]);
    await engine.start();
    await time.advance(0);
    expect(time.intervals().sort()).toEqual([1_000, 30_000]);
    await engine.stop();
    expect(time.count()).toBe(0);
    hanging.resolve("too late");
    await time.advance(120_000);
    expect(tool.calls).toHaveLength(1);
    expect(log.of("feed.refreshed").map((data) => data.feed_id)).toEqual(["clock"]);
    expect(engine.snapshot().find((entry) => entry.id === "system_metrics")!.value).toBeUndefined();
  });

  it("start again after stop resumes the schedule", async () => {
    let n = 0;
    const { time, tool, engine } = setup(() => `v${++n}`);
    await engine.start();
    await time.advance(0);
    await engine.stop();
    await time.advance(60_000);
    expect(tool.calls).toHaveLength(1);
    await engine.start();
    await time.advance(30_000);
    expect(tool.calls).toHaveLength(3);
    await engine.stop();
  });

  it("do not refresh in the background before start, but resolve gives them a first value", async () => {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const tool = fakeExecutor("tool", () => "now");
    const engine = createFeedEngine({
      log: log.log,
      executors: [tool],
      clock: time.clock,
      timers: time.timers,
    });
    await engine.add(metrics);
    await time.advance(120_000);
    expect(tool.calls).toHaveLength(0);
    expect(time.count()).toBe(0);
    const snapshot = await engine.resolve();
    expect(snapshot[0]!.value).toBe("now");
    expect(log.of("feed.refreshed")[0]!.trigger).toBe("initial");
    await engine.resolve(); // a periodic feed with a value is not fetched by resolve
    expect(tool.calls).toHaveLength(1);
  });
});
