import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type ScriptedTurn } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { type AgentSpec, createAgentRuntime } from "../src/runtime/index.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "home";
const model = "claude-sonnet-4-5";
let store: EventStore;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-kinds-"));
});
afterEach(async () => {
  await cleanup();
});

function spec(directive: string, overrides: Partial<AgentSpec> = {}): AgentSpec {
  return {
    directive,
    instructions: `You are ${directive}.`,
    model,
    limits: {},
    permits: () => true,
    tools: [],
    ...overrides,
  };
}

/** A provider whose answer depends on the system prompt: parent and child directives differ. */
function byDirective(answers: Record<string, ScriptedTurn[]>) {
  const providers = Object.fromEntries(
    Object.entries(answers).map(([name, script]) => [
      name,
      createScriptedProvider({ model, script, loop: true }),
    ]),
  );
  const first = Object.values(providers)[0]!;
  return {
    name: first.name,
    format: first.format,
    stream(
      request: Parameters<typeof first.stream>[0],
      options?: Parameters<typeof first.stream>[1],
    ) {
      // One-shot llm calls carry no system prompt: they go to the "none" script.
      const name =
        request.system === undefined
          ? "none"
          : Object.keys(providers).find((key) => request.system?.includes(`"${key}"`));
      return providers[name ?? Object.keys(providers)[0]!]!.stream(request, options);
    },
  };
}

describe("action kinds", () => {
  it("runs an agent action as a linked child thread whose final response is the output", async () => {
    const provider = byDirective({
      parent: [
        '<action type="agent" mode="sync" id="c1">{"name": "researcher", "parameters": {"question": "why"}, "output_key": "found"}</action><response>child said: $found</response>',
      ],
      researcher: ["<response>because</response>"],
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: spec("parent"),
      agents: {
        get: (name) => (name === "researcher" ? spec("researcher") : undefined),
        names: () => ["researcher"],
      },
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result).toMatchObject({ status: "completed", result: "child said: because" });
    const events = await readAll(store, continuity);
    const child = events.find(
      (event) => event.type === "thread.started" && (event.data as { parent?: unknown }).parent,
    );
    expect(child?.data).toMatchObject({
      directive: "researcher",
      parent: { thread: result.thread, action: "c1", depth: 1 },
    });
    expect(
      events.some(
        (event) => event.type === "thread.completed" && event.stream.id === child!.stream.id,
      ),
    ).toBe(true);
    // The child's task is its first message.
    const childRun = events.find(
      (event) => event.type === "run.started" && event.stream.id === child!.stream.id,
    );
    expect(childRun?.data).toMatchObject({ input: '{"question":"why"}' });

    const report = await replayContinuity({
      source: store,
      continuity,
      stallMs: 2000,
      makeRuntime: ({ store: target, provider: recorded, intercept }) =>
        createAgentRuntime({
          store: target,
          provider: recorded,
          agent: spec("parent"),
          agents: {
            get: (name) => (name === "researcher" ? spec("researcher") : undefined),
            names: () => ["researcher"],
          },
          intercept,
        }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });

  it("refuses a spawn past the depth limit with a limit event", async () => {
    const provider = byDirective({
      loop: [
        '<action type="agent" mode="sync" id="again">{"name": "loop", "parameters": {}}</action><response>done</response>',
      ],
    });
    const looping = spec("loop", { limits: { maxSpawnDepth: 2 } });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: looping,
      agents: { get: () => looping, names: () => ["loop"] },
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    const events = await readAll(store, continuity);
    const limit = events.find((event) => event.type === "limit.reached");
    expect(limit?.data).toEqual({ limit: "spawn_depth", value: 3, max: 2 });
    const failed = events.find(
      (event) =>
        event.type === "action.failed" &&
        (event.data as { error: { code: string } }).error.code === "limit.spawn-depth",
    );
    expect(failed).toBeDefined();
  });

  it("runs an llm action as a one-shot call and refuses one without a prompt", async () => {
    const provider = byDirective({
      main: [
        '<action type="llm" mode="sync" id="s1">{"name": "summarize", "parameters": {"prompt": "Summarize: a b c"}, "output_key": "sum"}</action><action type="llm" mode="sync" id="s2">{"name": "summarize", "parameters": {}}</action><response>$sum</response>',
      ],
      none: ["abc in short"],
    });
    const runtime = createAgentRuntime({ store, provider, agent: spec("main") });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result).toMatchObject({ status: "completed", result: "abc in short" });
    const events = await readAll(store, continuity);
    const skipped = events.find((event) => event.type === "action.skipped");
    expect(skipped?.data).toMatchObject({ action_id: "s2", reason: "bad-parameters" });
  });
});

describe("turns that arrive mid-run", () => {
  function gatedTool() {
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let entered: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const tool = defineTool({
      name: "wait",
      description: "Waits for the test.",
      parameters: z.object({}),
      execute: async (_input, context) => {
        entered();
        await Promise.race([
          gate,
          new Promise((_resolve, reject) =>
            context.signal.addEventListener("abort", () => reject(new Error("stopped"))),
          ),
        ]);
        return "ok";
      },
    });
    return { tool, open, inside };
  }
  const WAIT =
    '<action type="tool" mode="sync" id="w">{"name": "wait", "parameters": {}}</action><response>first done</response>';

  it("queues the second turn behind the running one (the default)", async () => {
    const { tool, open, inside } = gatedTool();
    const provider = createScriptedProvider({
      model,
      script: [WAIT, "<response>second done</response>"],
    });
    let queued: () => void = () => {};
    const wasQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: spec("main", { tools: [tool] }),
      observer: (notice) => {
        if (notice.type === "queued") queued();
      },
    });
    const first = runtime.submit(continuity, { text: "one", actor: "ada", origin: "test" });
    await inside;
    const second = runtime.submit(continuity, { text: "two", actor: "ada", origin: "test" });
    await wasQueued;
    open();
    expect(await first).toMatchObject({ status: "completed", result: "first done" });
    expect(await second).toMatchObject({ status: "completed", result: "second done" });
    const types = (await readAll(store, continuity)).map((event) => event.type);
    expect(types.indexOf("turn.queued")).toBeLessThan(types.lastIndexOf("run.started"));
  });

  it("cancels the running turn when the policy is interrupt", async () => {
    const { tool, inside } = gatedTool();
    const provider = createScriptedProvider({
      model,
      script: [WAIT, "<response>second done</response>"],
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: spec("main", { tools: [tool] }),
      concurrency: "interrupt",
    });
    const first = runtime.submit(continuity, { text: "one", actor: "ada", origin: "test" });
    await inside;
    const second = runtime.submit(continuity, { text: "two", actor: "ada", origin: "test" });
    expect(await first).toMatchObject({ status: "cancelled" });
    expect(await second).toMatchObject({ status: "completed", result: "second done" });
    const events = await readAll(store, continuity);
    expect(events.some((event) => event.type === "action.cancelled")).toBe(true);
    expect(events.some((event) => event.type === "turn.queued")).toBe(false);
  });
});

describe("limits", () => {
  it("stops at max_spend using the model's prices", async () => {
    const provider = createScriptedProvider({
      model,
      loop: true,
      script: [
        {
          text: '<response final="false">more</response>',
          usage: { inputTokens: 100_000, outputTokens: 10_000 },
        },
      ],
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: spec("main", { limits: { maxSpendUsd: 0.5 } }),
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("limit");
    const limit = (await readAll(store, continuity)).find(
      (event) => event.type === "limit.reached",
    );
    expect(limit?.data).toMatchObject({ limit: "max_spend", max: 0.5 });
    expect((limit!.data as { value: number }).value).toBeGreaterThanOrEqual(0.5);
  });

  it("stops at max_tokens", async () => {
    const provider = createScriptedProvider({
      model,
      loop: true,
      script: [
        {
          text: '<response final="false">more</response>',
          usage: { inputTokens: 600, outputTokens: 10 },
        },
      ],
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: spec("main", { limits: { maxTokens: 1500 } }),
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result).toMatchObject({ status: "limit", steps: 3 });
  });

  it("stops at the wall-time limit, measured on the injected clock", async () => {
    let now = 0;
    const provider = createScriptedProvider({
      model,
      loop: true,
      script: ['<response final="false">more</response>'],
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: spec("main", { limits: { maxWallMs: 5000 } }),
      now: () => {
        now += 1000;
        return now;
      },
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("limit");
    const limit = (await readAll(store, continuity)).find(
      (event) => event.type === "limit.reached",
    );
    expect(limit?.data).toMatchObject({ limit: "wall_time", max: 5000 });
  });
});
