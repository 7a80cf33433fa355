import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createOpenAIResponsesProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { ResponsesServer } from "./support/responses-server.js";
import {
  agentSpec,
  dataOf,
  expectKeyNeverLogged,
  ofType,
  recordingTool,
  replay,
} from "./support/runtime-e2e.js";
import { readAll, tempStore } from "./support/transcripts.js";

// The runtime continues an OpenAI Responses conversation from the thread's provider cursor
// (`previous_response_id`, only the new input), and rebuilds the whole context from the log when
// the server no longer knows the id. The server below is a real HTTP server on loopback that keeps
// the ids it issued, as OpenAI does, and refuses an id it does not know; the real `openai` SDK
// talks to it.

const KEY = "sk-test-cursor-key-0123456789abcdefABCD";
const continuity = "home";

const FINAL = (text: string) => `<response>${text}</response>`;

let store: EventStore;
let cleanup: () => Promise<void>;
let server: ResponsesServer;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-cursor-"));
  server = new ResponsesServer();
  await server.start();
});
afterEach(async () => {
  await server.close();
  await cleanup();
});

describe("provider cursors on OpenAI Responses", () => {
  it("continues with previous_response_id and only the new input; an unknown id rebuilds from the log", async () => {
    const weather = recordingTool("weather", () => ({ celsius: 18 }));
    const agent = agentSpec("gpt-4.1", [weather.tool]);
    const provider = createOpenAIResponsesProvider({
      apiKey: KEY,
      baseURL: server.url,
      env: {},
      transport: { maxAttempts: 1 },
    });
    server.answer(
      { call: { id: "call_w1", name: "weather", args: '{"city":"Oslo"}' } },
      { text: FINAL("It is 18 °C in Oslo.") },
      { text: FINAL("Bergen is rainy.") },
      { text: FINAL("You asked about Oslo and Bergen.") },
    );
    const runtime = createAgentRuntime({ store, provider, agent });
    const first = await runtime.submit(continuity, { text: "Oslo?", actor: "ada", origin: "t" });
    expect(first).toMatchObject({ status: "completed", steps: 2 });
    expect(weather.calls).toEqual([{ city: "Oslo" }]);

    // Step 1 sends the whole context; step 2 continues from resp_1 with the tool output only.
    const [whole1, continued1] = server.requests;
    expect(whole1!.previous_response_id).toBeUndefined();
    expect(whole1!.input).toEqual([expect.objectContaining({ role: "user" })]);
    expect(continued1!.previous_response_id).toBe("resp_1");
    expect(continued1!.input).toEqual([
      expect.objectContaining({ type: "function_call_output", call_id: "call_w1" }),
    ]);
    expect(continued1!.instructions).toBe(whole1!.instructions);

    // A new turn continues from the run's last response with the new user message only.
    const second = await runtime.submit(continuity, { text: "Bergen?", actor: "ada", origin: "t" });
    expect(second).toMatchObject({ status: "completed", result: "Bergen is rainy." });
    expect(server.requests[2]!.previous_response_id).toBe("resp_2");
    expect(server.requests[2]!.input).toEqual([
      expect.objectContaining({ role: "user", content: expect.stringContaining("Bergen?") }),
    ]);

    // The server forgets its responses: the continued call is refused, and the runtime sends
    // the whole context rebuilt from the log, without the id, and goes on.
    server.forget();
    const third = await runtime.submit(continuity, { text: "Recap?", actor: "ada", origin: "t" });
    await runtime.close();
    expect(third).toMatchObject({
      status: "completed",
      result: "You asked about Oslo and Bergen.",
    });
    const [refused, rebuilt] = server.requests.slice(3);
    expect(refused!.previous_response_id).toBe("resp_3");
    expect(refused!.input).toHaveLength(1);
    expect(rebuilt!.previous_response_id).toBeUndefined();
    const roles = rebuilt!.input.map((item) => item.role ?? item.type);
    expect(roles).toEqual([
      "user",
      "function_call",
      "function_call_output",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    expect(rebuilt!.input.at(-1)).toMatchObject({
      role: "user",
      content: expect.stringContaining("Recap?"),
    });
    expect(server.requests).toHaveLength(5);

    const events = await readAll(store, continuity);
    // The log says what happened: which calls continued, and the rotation of the expired cursor.
    const compiled = ofType(events, "context.compiled").map((event) => dataOf(event).cursor);
    expect(compiled).toEqual([
      undefined,
      expect.objectContaining({ previous_response_id: "resp_1", messages: 1 }),
      expect.objectContaining({ previous_response_id: "resp_2", messages: 1 }),
      expect.objectContaining({ previous_response_id: "resp_3", messages: 1 }),
    ]);
    // A continued step's input is estimated from its whole context (the provider counts it all).
    const estimates = ofType(events, "step.started").map(
      (event) => dataOf(event).estimated_input_tokens,
    );
    expect(estimates).toHaveLength(4);
    for (const estimate of estimates) expect(estimate).toBeGreaterThan(0);
    const rotations = ofType(events, "provider.cursor-rotated").map(dataOf);
    expect(rotations).toEqual([
      {
        previous_response_id: "resp_3",
        reason: "expired",
        step: expect.any(String),
        rebuilt_messages: 7,
      },
    ]);
    expect(ofType(events, "message.failed")).toEqual([]);
    expectKeyNeverLogged(server.received, events, KEY);

    // Replay sends the same requests (continued ones included) to the log, never to the server.
    const report = await replay(store, continuity, agent);
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(server.requests).toHaveLength(5);
    expect(weather.calls).toHaveLength(1);
  });

  it("sends the whole context, not the cursor, once a newer browser snapshot shrank one the provider holds", async () => {
    let page = 0;
    const snapshot = recordingTool("browser.snapshot", () => {
      page += 1;
      return {
        tab: "t1",
        url: `http://127.0.0.1:8080/p${page}`,
        title: `Page ${page}`,
        snapshot: `main:\n  heading "Page ${page}"`,
        truncated: false,
      };
    });
    const agent = agentSpec("gpt-4.1", [snapshot.tool]);
    const provider = createOpenAIResponsesProvider({
      apiKey: KEY,
      baseURL: server.url,
      env: {},
      transport: { maxAttempts: 1 },
    });
    server.answer(
      { call: { id: "call_s1", name: "browser_snapshot", args: "{}" } },
      { call: { id: "call_s2", name: "browser_snapshot", args: "{}" } },
      { text: FINAL("Page 2 is open.") },
    );
    const runtime = createAgentRuntime({ store, provider, agent });
    const result = await runtime.submit(continuity, { text: "Look.", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result).toMatchObject({ status: "completed", steps: 3 });
    const [, continued, whole] = server.requests;
    // The first snapshot was new to the provider: the step continues from resp_1.
    expect(continued!.previous_response_id).toBe("resp_1");
    // The second shrank the first, which resp_2's conversation holds whole: all is sent again,
    // with the first snapshot as its line of history.
    expect(whole!.previous_response_id).toBeUndefined();
    const outputs = whole!.input
      .filter((item) => item.type === "function_call_output")
      .map((item) => String(item.output));
    expect(outputs).toHaveLength(2);
    expect(outputs[0]).toBe(
      '[browser.snapshot of http://127.0.0.1:8080/p1 "Page 1" (tab t1): superseded by a later snapshot]',
    );
    expect(outputs[1]).toContain('heading \\"Page 2\\"');
    const events = await readAll(store, continuity);
    const cursors = ofType(events, "context.compiled").map((event) => dataOf(event).cursor);
    expect(cursors).toEqual([
      undefined,
      expect.objectContaining({ previous_response_id: "resp_1" }),
      undefined,
    ]);
    const report = await replay(store, continuity, agent);
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(snapshot.calls).toHaveLength(2);
  });
});
