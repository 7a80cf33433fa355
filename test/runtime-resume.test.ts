import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyTool, defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { type AgentSpec, createAgentRuntime } from "../src/runtime/index.js";
import { dyingAt } from "./support/dying-store.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "home";
let store: EventStore;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-resume-"));
});
afterEach(async () => {
  await cleanup();
});

/** A tool whose first run never ends (the process "dies" in it); later runs return at once. */
function stallingTool(name: string, idempotent: boolean) {
  const runs: string[] = [];
  let entered: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const tool = defineTool({
    name,
    description: "Writes something.",
    parameters: z.object({ value: z.string() }),
    idempotent,
    sideEffects: true,
    execute: ({ value }) => {
      runs.push(value);
      if (runs.length === 1) {
        entered();
        return new Promise(() => {});
      }
      return { wrote: value };
    },
  });
  return { tool, runs, started };
}

function agent(tools: AnyTool[]): AgentSpec {
  return {
    directive: "tester",
    instructions: "Test things.",
    model: "claude-sonnet-4-5",
    limits: {},
    permits: () => true,
    tools,
  };
}

/** Replays the continuity with `tools`, re-enacting the crash: it must be identical. */
async function expectReplayIdentical(tools: AnyTool[], recoveries: number) {
  const report = await replayContinuity({
    source: store,
    continuity,
    stallMs: 2000,
    makeRuntime: ({ store: target, provider, intercept }) =>
      createAgentRuntime({ store: target, provider, agent: agent(tools), intercept }),
  });
  expect(report.difference).toBeUndefined();
  expect(report).toMatchObject({ identical: true, recoveries });
}

const ACT = (name: string) =>
  `<action type="tool" mode="sync" id="w1">{"name":"${name}","parameters":{"value":"v"}}</action><response>written</response>`;

describe("resume after a crash", () => {
  it("reports a non-idempotent action cut off mid-run as interrupted and never runs it twice", async () => {
    const { tool, runs, started } = stallingTool("db.write", false);
    const first = createAgentRuntime({
      store,
      provider: createScriptedProvider({ model: "claude-sonnet-4-5", script: [ACT("db.write")] }),
      agent: agent([tool]),
    });
    void first.submit(continuity, { text: "write it", actor: "ada", origin: "test" });
    await started;
    await store.flush();
    // The first runtime is now "dead": it never writes again. A new one recovers from the log.
    const second = createAgentRuntime({
      store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: ["<response>I could not confirm the write.</response>"],
      }),
      agent: agent([tool]),
    });
    const results = await second.resume(continuity);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: "completed" });
    expect(runs).toEqual(["v"]);
    const events = await readAll(store, continuity);
    const interrupted = events.find((event) => event.type === "action.interrupted");
    expect(interrupted?.data).toMatchObject({ action_id: "w1", dispatched: true, rerun: false });
    // The model was not called again for step 0: step 1 is the next model call.
    const steps = events
      .filter((event) => event.type === "step.started")
      .map((event) => event.stream.id);
    expect(steps).toEqual([`${results[0]!.thread}:0`, `${results[0]!.thread}:1`]);
    expect(
      events.filter((event) => event.type === "run.started").map((event) => event.data),
    ).toMatchObject([{ resumed: false }, { resumed: true }]);
  });

  it("runs an interrupted idempotent action again and ends the run as its step had decided", async () => {
    const { tool, runs, started } = stallingTool("cache.put", true);
    const first = createAgentRuntime({
      store,
      provider: createScriptedProvider({ model: "claude-sonnet-4-5", script: [ACT("cache.put")] }),
      agent: agent([tool]),
    });
    void first.submit(continuity, { text: "cache it", actor: "ada", origin: "test" });
    await started;
    await store.flush();
    const provider = createScriptedProvider({ model: "claude-sonnet-4-5", script: [] });
    const second = createAgentRuntime({ store, provider, agent: agent([tool]) });
    await second.resume(continuity);
    expect(runs).toEqual(["v", "v"]);
    expect(provider.requests).toHaveLength(0);
    const events = await readAll(store, continuity);
    expect(events.find((event) => event.type === "action.interrupted")?.data).toMatchObject({
      rerun: true,
    });
    const succeeded = events.filter((event) => event.type === "action.succeeded");
    expect(succeeded.map((event) => event.data)).toMatchObject([
      { attempt: 2, output: { wrote: "v" } },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "run.completed", data: { status: "completed" } });
    await expectReplayIdentical([tool], 1);
  });

  it("stores the output of an interrupted idempotent action it runs again under its output_key", async () => {
    const { tool, started } = stallingTool("cache.put", true);
    const echo = defineTool({
      name: "echo",
      description: "Returns its value.",
      parameters: z.object({ value: z.string() }),
      execute: ({ value }) => ({ value }),
    });
    // The process dies as the tool starts: its intent is logged, nothing after it.
    const dying = dyingAt(store, "action.started");
    const first = createAgentRuntime({
      store: dying.store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: [
          `<action type="tool" mode="sync" id="w1">{"name":"cache.put","parameters":{"value":"v"},"output_key":"x"}</action><response final="false">cached</response>`,
        ],
      }),
      agent: agent([tool, echo]),
    });
    void first.submit(continuity, { text: "cache it", actor: "ada", origin: "test" });
    await started;
    await dying.died;
    await store.flush();
    const second = createAgentRuntime({
      store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: [
          `<action type="tool" mode="sync" id="e1">{"name":"echo","parameters":{"value":"$x.wrote"}}</action><response>done</response>`,
        ],
      }),
      agent: agent([tool, echo]),
    });
    const [result] = await second.resume(continuity);
    expect(result).toMatchObject({ status: "completed", result: "done" });
    const events = await readAll(store, continuity);
    const echoed = events.find(
      (event) =>
        event.type === "action.dispatched" &&
        (event.data as { action_id: string }).action_id === "e1",
    );
    // The next step sees what the re-run stored, as it would after a run without a crash.
    expect(echoed?.data).toMatchObject({ parameters: { value: "v" } });
    expect(events.find((event) => event.type === "variable.set")?.data).toMatchObject({
      name: "x",
      value: { wrote: "v" },
      action_id: "w1",
    });
    await expectReplayIdentical([tool, echo], 1);
  });

  it("marks a model call cut off mid-stream as interrupted and goes on with the next step", async () => {
    let tokens = 0;
    const hang = new Promise<void>(() => {});
    let stalled: () => void = () => {};
    const stalledNow = new Promise<void>((resolve) => {
      stalled = resolve;
    });
    const first = createAgentRuntime({
      store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: ["<response>this answer never ends because the process dies</response>"],
        tokens: "word",
        timing: { tokenMs: 1 },
        sleep: () => {
          if (++tokens <= 3) return Promise.resolve();
          stalled();
          return hang;
        },
      }),
      agent: agent([]),
    });
    void first.submit(continuity, { text: "talk", actor: "ada", origin: "test" });
    await stalledNow;
    await store.flush();
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: ["<response>again</response>"],
    });
    const second = createAgentRuntime({ store, provider, agent: agent([]) });
    const [result] = await second.resume(continuity);
    expect(result).toMatchObject({ status: "completed", result: "again" });
    const events = await readAll(store, continuity);
    expect(events.some((event) => event.type === "step.interrupted")).toBe(true);
    expect(JSON.stringify(provider.requests[0]!.messages.at(-1))).toContain("cut off by a restart");
    await expectReplayIdentical([], 1);
  });

  it("goes on at the open run's own first step when the crash came before that step began", async () => {
    const first = createAgentRuntime({
      store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: ["<response>one</response>", "<response>two</response>"],
      }),
      agent: agent([]),
    });
    await first.submit(continuity, { text: "first", actor: "ada", origin: "test" });
    // The process dies right after the second turn's run.started: nothing of its step is written.
    const dying = dyingAt(store, "context.compiled");
    const second = createAgentRuntime({
      store: dying.store,
      provider: createScriptedProvider({ model: "claude-sonnet-4-5", script: [] }),
      agent: agent([]),
    });
    void second.submit(continuity, { text: "second", actor: "ada", origin: "test" });
    await dying.died;
    await store.flush();
    const third = createAgentRuntime({
      store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: ["<response>two</response>"],
      }),
      agent: agent([]),
    });
    const results = await third.resume(continuity);
    expect(results).toMatchObject([{ status: "completed", result: "two" }]);
    const events = await readAll(store, continuity);
    const steps = events
      .filter((event) => event.type === "step.started")
      .map((event) => event.stream.id);
    // Step 0 answered the first turn; the second turn's run goes on at step 1, not at 0 again.
    expect(steps).toEqual([`${results[0]!.thread}:0`, `${results[0]!.thread}:1`]);
    await expectReplayIdentical([], 1);
  });

  it("runs turns that arrived before the crash and were never taken", async () => {
    await store.append({
      continuity,
      type: "turn.added",
      actor: "ada",
      origin: "test",
      data: { text: "are you there?" },
    });
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: ["<response>yes</response>"],
    });
    const runtime = createAgentRuntime({ store, provider, agent: agent([]) });
    const results = await runtime.resume(continuity);
    expect(results.map((result) => result.result)).toEqual(["yes"]);
  });
});
