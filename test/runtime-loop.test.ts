import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { type AgentSpec, createAgentRuntime, type RunNotice } from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "home";
let store: EventStore;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-runtime-"));
});
afterEach(async () => {
  await cleanup();
});

const calls: string[] = [];
const echo = defineTool({
  name: "echo",
  description: "Returns its text.",
  parameters: z.object({ text: z.string() }),
  idempotent: true,
  execute: ({ text }) => {
    calls.push(text);
    return { text };
  },
});

function agent(overrides: Partial<AgentSpec> = {}): AgentSpec {
  return {
    directive: "tester",
    instructions: "Test things.",
    model: "claude-sonnet-4-5",
    limits: {},
    permits: () => true,
    tools: [echo],
    ...overrides,
  };
}

const types = (events: SpoolEvent[]) =>
  events.filter((event) => event.criticality === "critical").map((event) => event.type);

describe("the agent loop", () => {
  it("runs actions as they close, continues on a non-final response and ends on a final one", async () => {
    calls.length = 0;
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: [
        `<thought>two at once</thought><action type="tool" mode="async" id="a1">{"name":"echo","parameters":{"text":"one"},"output_key":"x"}</action><action type="tool" mode="sync" id="a2">{"name":"echo","parameters":{"text":"$x.text and two"},"depends_on":["a1"]}</action><response final="false">working: $x.text</response>`,
        `<response>done</response>`,
      ],
    });
    const notices: RunNotice[] = [];
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: agent(),
      observer: (notice) => notices.push(notice),
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    expect(result.result).toBe("done");
    expect(calls).toEqual(["one", "one and two"]);

    const events = await readAll(store, continuity);
    const thread = result.thread;
    const onThread = events
      .filter((event) => event.stream.id === thread)
      .map((event) => event.type);
    expect(onThread).toEqual([
      "thread.started",
      // The model's window, resolved once before its first run (the catalogue knows this one).
      "model.described",
      "run.started",
      "loop.decided",
      "loop.decided",
      "run.completed",
    ]);
    // The first step: the model streams on while its actions run, so their events interleave.
    const first = types(events.filter((event) => event.stream.id === `${thread}:0`));
    expect(first.slice(0, 3)).toEqual(["context.compiled", "step.started", "action.dispatched"]);
    expect([...first].sort()).toEqual(
      [
        "context.compiled",
        "step.started",
        "action.dispatched",
        "action.started",
        "action.succeeded",
        "variable.set",
        "action.dispatched",
        "action.started",
        "action.succeeded",
        "message.completed",
        "step.completed",
      ].sort(),
    );
    // a2 waited for a1: it was dispatched after a1 succeeded.
    const a1Done = first.indexOf("action.succeeded");
    expect(first.lastIndexOf("action.dispatched")).toBeGreaterThan(a1Done);
    const loopAt = events.findIndex((event) => event.type === "loop.decided");
    expect(
      events.slice(0, loopAt).filter((event) => event.type === "action.succeeded"),
    ).toHaveLength(2);
    // The second call saw the results of the first step as a structured message.
    const second = provider.requests[1]!;
    const last = second.messages.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.role === "user" ? String(last.content) : "").toContain(
      '<result id="a2" type="tool" name="echo" status="succeeded">',
    );
    expect(notices.at(-1)).toMatchObject({
      type: "run-ended",
      status: "completed",
      result: "done",
    });
    const responses = notices
      .filter((notice) => notice.type === "output" && notice.event.type === "block-delta")
      .map((notice) =>
        notice.type === "output" && notice.event.type === "block-delta" ? notice.event.kind : "",
      );
    expect(responses).toContain("thought");
  });

  it("continues the same thread across turns, with the earlier turns in the context", async () => {
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: ["<response>hello ada</response>", "<response>still here</response>"],
    });
    const runtime = createAgentRuntime({ store, provider, agent: agent() });
    const first = await runtime.submit(continuity, { text: "hi", actor: "ada", origin: "test" });
    const second = await runtime.submit(continuity, {
      text: "again",
      actor: "ada",
      origin: "test",
    });
    expect(second.thread).toBe(first.thread);
    const messages = provider.requests[1]!.messages;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[1]).toMatchObject({
      role: "assistant",
      content: "<response>hello ada</response>",
    });
  });

  it("refuses an action the directive does not permit, and tells the model why", async () => {
    calls.length = 0;
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: [
        `<action type="tool" mode="sync" id="a1">{"name":"echo","parameters":{"text":"no"}}</action>`,
        "<response>ok</response>",
      ],
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: agent({ permits: (_type, name) => name !== "echo" }),
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    expect(calls).toEqual([]);
    const skipped = (await readAll(store, continuity)).find(
      (event) => event.type === "action.skipped",
    );
    expect(skipped?.data).toMatchObject({ reason: "not-allowed" });
    expect(JSON.stringify(provider.requests[1]!.messages.at(-1))).toContain("may not run tool");
  });

  it("stops at max_turns with a limit event", async () => {
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      loop: true,
      script: ['<response final="false">more</response>'],
    });
    const runtime = createAgentRuntime({
      store,
      provider,
      agent: agent({ limits: { maxTurns: 3 } }),
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("limit");
    expect(result.steps).toBe(3);
    const limit = (await readAll(store, continuity)).find(
      (event) => event.type === "limit.reached",
    );
    expect(limit?.data).toEqual({ limit: "max_turns", value: 3, max: 3 });
  });

  it("treats plain text from a model that ignores the protocol as its answer", async () => {
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: ["Just an answer."],
    });
    const runtime = createAgentRuntime({ store, provider, agent: agent() });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result).toMatchObject({ status: "completed", result: "Just an answer.", steps: 1 });
  });

  it("runs native tool calls through the same scheduler and sends their results back", async () => {
    calls.length = 0;
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: [
        {
          toolCalls: [{ id: "toolu_1", name: "echo", input: { text: "native" } }],
          stopReason: "tool-use",
        },
        "<response>got it</response>",
      ],
    });
    const runtime = createAgentRuntime({ store, provider, agent: agent() });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    expect(calls).toEqual(["native"]);
    const toolMessage = provider.requests[1]!.messages.find((message) => message.role === "tool");
    expect(toolMessage).toMatchObject({
      role: "tool",
      results: [{ toolCallId: "toolu_1", output: '{"text":"native"}', isError: false }],
    });
  });
});

describe("native tools", () => {
  it("offers the tools natively under provider-safe names and maps calls back", async () => {
    const added: number[] = [];
    const add = defineTool({
      name: "math.add",
      description: "Adds two numbers.",
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        added.push(a + b);
        return a + b;
      },
    });
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: [
        {
          toolCalls: [{ id: "toolu_9", name: "math_add", input: { a: 2, b: 3 } }],
          stopReason: "tool-use",
        },
        "<response>5</response>",
      ],
    });
    const runtime = createAgentRuntime({ store, provider, agent: agent({ tools: [add] }) });
    const result = await runtime.submit(continuity, { text: "add", actor: "ada", origin: "test" });
    expect(result).toMatchObject({ status: "completed", result: "5" });
    expect(added).toEqual([5]);
    expect(provider.requests[0]!.tools).toEqual([
      {
        name: "math_add",
        description: "Adds two numbers.",
        inputSchema: expect.objectContaining({ type: "object" }),
      },
    ]);
    const dispatched = (await readAll(store, continuity)).find(
      (event) => event.type === "action.dispatched",
    );
    expect(dispatched?.data).toMatchObject({ name: "math.add", action_id: "toolu_9" });
    const toolMessage = provider.requests[1]!.messages.find((message) => message.role === "tool");
    expect(toolMessage).toMatchObject({ results: [{ toolCallId: "toolu_9", name: "math_add" }] });
  });
});
