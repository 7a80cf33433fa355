import { describe, expect, it } from "vitest";
import { createFeedEngine } from "../src/feeds/index.js";
import { fakeExecutor, fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

function setup() {
  const time = fakeTime();
  const log = memoryFeedLog(time.clock);
  const tool = fakeExecutor("tool", (call) =>
    call.name === "git_tree" ? "src/\n  index.ts" : { cpu: 45.2, host: "ada" },
  );
  const llm = fakeExecutor("llm", (call) => `summary of ${JSON.stringify(call.parameters)}`);
  const engine = createFeedEngine({
    log: log.log,
    executors: [tool, llm],
    clock: time.clock,
    timers: time.timers,
  });
  return { engine, tool, llm, log };
}

describe("feeds that name other feeds in their params ($id)", () => {
  it("resolve the named feed first and pass its value (the seed's code_summary example)", async () => {
    const { engine, tool, llm } = setup();
    // Added in the "wrong" order: the summary before the feed it reads.
    await engine.add({
      id: "code_summary",
      type: "on_demand",
      cache_ttl: 1800,
      source: {
        type: "llm",
        name: "summarize",
        params: {
          prompt: "Summarize the main purpose of this codebase",
          context: "$repo_structure",
          model: "gemini-1.5-flash",
        },
      },
    });
    await engine.add({
      id: "repo_structure",
      type: "on_demand",
      source: { type: "tool", name: "git_tree", params: { path: "/src", max_depth: 3 } },
    });
    await engine.resolve();
    expect(tool.calls).toHaveLength(1);
    expect(llm.calls[0]!.parameters).toEqual({
      prompt: "Summarize the main purpose of this codebase",
      context: "src/\n  index.ts",
      model: "gemini-1.5-flash",
    });
    // The definition keeps the reference; only the call has the value.
    expect(engine.definitions()[0]!.source.params.context).toBe("$repo_structure");
  });

  it("also when only the dependent feed is asked for", async () => {
    const { engine, llm } = setup();
    await engine.add({ id: "tree", type: "on_demand", source: { type: "tool", name: "git_tree" } });
    await engine.add({
      id: "summary",
      type: "on_demand",
      source: { type: "llm", name: "s", params: { text: "files: $tree" } },
    });
    await engine.resolve(["summary"]);
    expect(llm.calls[0]!.parameters).toEqual({ text: "files: src/\n  index.ts" });
  });

  it("pass an object value with its type, reach into it with a path, and leave unknown names", async () => {
    const { engine, llm } = setup();
    await engine.add({
      id: "metrics",
      type: "on_demand",
      source: { type: "tool", name: "monitor" },
    });
    await engine.add({
      id: "advice",
      type: "on_demand",
      source: {
        type: "llm",
        name: "advise",
        params: {
          load: "$metrics",
          note: "cpu at $metrics.cpu%",
          other: "$not_a_feed",
          cost: "$$5",
        },
      },
    });
    await engine.resolve();
    expect(llm.calls[0]!.parameters).toEqual({
      load: { cpu: 45.2, host: "ada" },
      note: "cpu at 45.2%",
      other: "$not_a_feed",
      cost: "$$5",
    });
  });

  it("cut a cycle instead of waiting forever", async () => {
    const { engine, llm } = setup();
    await engine.add({
      id: "a",
      type: "on_demand",
      source: { type: "llm", name: "a", params: { from: "$b" } },
    });
    await engine.add({
      id: "b",
      type: "on_demand",
      source: { type: "llm", name: "b", params: { from: "$a" } },
    });
    const snapshot = await engine.resolve();
    expect(llm.calls.map((call) => call.name).sort()).toEqual(["a", "b"]);
    expect(snapshot.every((entry) => entry.value !== undefined)).toBe(true);
  });
});
