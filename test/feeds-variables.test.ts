import { describe, expect, it } from "vitest";
import { createVariableStore, substituteParameters } from "../src/actions/index.js";
import {
  createFeedEngine,
  type FeedSnapshot,
  feedVariableSource,
  feedVariables,
} from "../src/feeds/index.js";
import { fakeExecutor, fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

const snapshot: FeedSnapshot = [
  { id: "current_datetime", type: "on_demand", value: "2024-06-15T12:34:56Z" },
  {
    id: "system_metrics",
    type: "periodic",
    value: '{\n  "cpu": 45.2,\n  "memory": 62.8\n}',
  },
  {
    id: "big",
    type: "on_demand",
    value: '{"rows": [1, 2\n… [truncated: 5 of 9 tokens]',
    truncated: true,
  },
  { id: "lucky", type: "on_demand", value: "42" },
  { id: "pending", type: "on_demand" },
];

describe("feeds as $variables", () => {
  it("feedVariables gives every feed with a value as text", () => {
    expect(feedVariables(snapshot)).toEqual({
      current_datetime: "2024-06-15T12:34:56Z",
      system_metrics: '{\n  "cpu": 45.2,\n  "memory": 62.8\n}',
      big: '{"rows": [1, 2\n… [truncated: 5 of 9 tokens]',
      lucky: "42",
    });
  });

  it("feedVariableSource gives JSON objects parsed, everything else as text, and misses the rest", () => {
    const source = feedVariableSource(snapshot);
    expect(source.lookup("current_datetime")).toEqual({ value: "2024-06-15T12:34:56Z" });
    expect(source.lookup("system_metrics")).toEqual({ value: { cpu: 45.2, memory: 62.8 } });
    expect(source.lookup("big")).toEqual({ value: '{"rows": [1, 2\n… [truncated: 5 of 9 tokens]' });
    expect(source.lookup("lucky")).toEqual({ value: "42" });
    expect(source.lookup("pending")).toBeUndefined();
    expect(source.lookup("nope")).toBeUndefined();
    const first = source.lookup("system_metrics")!.value as Record<string, unknown>;
    first.cpu = 0;
    expect(source.lookup("system_metrics")).toEqual({ value: { cpu: 45.2, memory: 62.8 } });
  });

  it("works as a fallback of the actions' variable store: the seed's logger action", () => {
    const variables = createVariableStore({ fallbacks: [feedVariableSource(snapshot)] });
    variables.set("current_datetime", "shadowed by a step variable");
    expect(
      substituteParameters(
        {
          timestamp: "$current_datetime",
          message: "Task completed at $system_metrics.cpu% CPU",
          system_load: "$system_metrics",
          unknown: "$not_a_feed stays",
        },
        variables,
      ),
    ).toEqual({
      timestamp: "shadowed by a step variable",
      message: "Task completed at 45.2% CPU",
      system_load: { cpu: 45.2, memory: 62.8 },
      unknown: "$not_a_feed stays",
    });
  });

  it("can follow a live engine", async () => {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    let load = 1;
    const engine = createFeedEngine({
      log: log.log,
      clock: time.clock,
      timers: time.timers,
      executors: [fakeExecutor("tool", () => ({ load: load++ }))],
    });
    await engine.add({
      id: "metrics",
      type: "periodic",
      interval: 5,
      source: { type: "tool", name: "m" },
    });
    await engine.start();
    await time.advance(0);
    const live = feedVariableSource(() => engine.snapshot());
    expect(live.lookup("metrics")).toEqual({ value: { load: 1 } });
    await time.advance(5_000);
    expect(live.lookup("metrics")).toEqual({ value: { load: 2 } });
    await engine.stop();
  });
});
