import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import {
  createAnthropicProvider,
  createOpenAIChatProvider,
  createProvider,
  type Provider,
  resolveProviderSettings,
} from "../src/providers/index.js";
import { type AgentSpec, createAgentRuntime } from "../src/runtime/index.js";
import { OVERLOADED_FRAME } from "./support/anthropic-sse.js";
import {
  chunkBytes,
  fixtureBytes,
  type ReplayServer,
  randomChunks,
  startReplayServer,
} from "./support/replay-server.js";
import {
  agentSpec,
  anthropicText,
  anthropicThinking,
  anthropicToolCalls,
  chatText,
  chatToolCalls,
  dataLines,
  dataOf,
  decisions,
  expectKeyNeverLogged,
  expectToolRun,
  ofType,
  type RecordingTool,
  recordingTool,
  replay,
  responsesItems,
  responsesText,
} from "./support/runtime-e2e.js";
import { readAll, tempStore } from "./support/transcripts.js";

// The agent runtime end to end: real provider SDKs read recorded provider streams from a loopback
// server, the runtime runs the tool calls in them and sends the results back, and every
// continuity written here replays as identical without calling the server or a tool again.

const continuity = "home";
/** Fake keys shaped like real ones: none may ever reach the log. */
const ANTHROPIC_KEY = "sk-ant-test-e2e-key-0123456789abcdef";
const OPENAI_KEY = "sk-test-e2e-key-0123456789abcdefABCD";

const REPLAY_FAILED_CALL_BUG =
  "a failed model call must replay with its error fields, partial output, model and usage (replay-provider.ts play())";

let store: EventStore;
let cleanup: () => Promise<void>;
let server: ReplayServer;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-runtime-e2e-"));
  server = await startReplayServer();
});
afterEach(async () => {
  await server.close();
  await cleanup();
});

const anthropic = () =>
  createAnthropicProvider({
    apiKey: ANTHROPIC_KEY,
    baseURL: server.url,
    transport: { maxAttempts: 1 },
  });
const openaiChat = () =>
  createOpenAIChatProvider({
    apiKey: OPENAI_KEY,
    baseURL: `${server.url}/v1`,
    flavour: "openai",
    env: {},
    transport: { maxAttempts: 1 },
  });
const fromSettings = (provider: string, model: string) =>
  createProvider(
    resolveProviderSettings(
      { provider, model, apiKey: OPENAI_KEY, baseURL: `${server.url}/v1` },
      {},
    ),
    { transport: { maxAttempts: 1 } },
  );

/** Serves each fixture in turn, as the chunks `split` cuts it into. */
function serve(
  paths: readonly string[],
  split: (bytes: Buffer, index: number) => (string | Uint8Array)[] = (bytes) => [bytes],
): void {
  server.respond(...paths.map((path, index) => ({ chunks: split(fixtureBytes(path), index) })));
}

/** Runs one turn; resolves with its result and the whole log. */
async function runTurn(provider: Provider, agent: AgentSpec, text: string) {
  const runtime = createAgentRuntime({ store, provider, agent });
  const result = await runtime.submit(continuity, { text, actor: "ada", origin: "test" });
  await runtime.close();
  const events = await readAll(store, continuity);
  return { result, events };
}

/** The id of the response a recorded Responses stream carries. */
const responseIdOf = (path: string) => String((dataLines(path)[0]!.response as { id: string }).id);

/** The JSON body of the `index`th request the server received. */
const body = (index: number) =>
  JSON.parse(server.requests[index]!.body) as Record<string, unknown> & {
    messages?: Record<string, unknown>[];
    input?: Record<string, unknown>[];
  };

/**
 * Replays the continuity with the runtime `agent` describes: it must be identical, and must call
 * neither the server nor any tool.
 */
async function expectIdenticalReplay(
  agent: AgentSpec,
  tools: RecordingTool[] = [],
  knownBug?: string,
) {
  const requests = server.requests.length;
  const calls = tools.map((tool) => tool.calls.length);
  const report = await replay(store, continuity, agent);
  expect(
    report.difference,
    `${knownBug ? `${knownBug}\n` : ""}replay differs: ${JSON.stringify(report.difference, null, 2)}`,
  ).toBeUndefined();
  expect(report.identical).toBe(true);
  expect(report.compared).toBeGreaterThan(0);
  expect(server.requests.length, "replay must not call the provider").toBe(requests);
  expect(
    tools.map((tool) => tool.calls.length),
    "replay must not run a tool",
  ).toEqual(calls);
}

describe("a tool-calling run over each provider's SDK", () => {
  it("Anthropic Messages: tool_use → tool_result with the same id, then the recorded answer (random chunks)", async () => {
    const first =
      "anthropic/raw/anthropic-sdk-python/555fb399-a54c-455b-9ac5-2c9673f18e12.response-0.sse";
    const second =
      "anthropic/raw/anthropic-sdk-python/555fb399-a54c-455b-9ac5-2c9673f18e12.response-1.sse";
    const [call] = anthropicToolCalls(first);
    expect(call).toMatchObject({ name: "get_weather", input: { location: "San Francisco, CA" } });
    const weather = recordingTool(call!.name, () => ({ temperature_f: 68, condition: "Sunny" }));
    const agent = agentSpec("claude-haiku-4-5", [weather.tool]);
    serve([first, second], (bytes, index) => randomChunks(bytes, 17 + index, 40));

    const { result, events } = await runTurn(anthropic(), agent, "What's the weather in SF?");

    expect(result).toMatchObject({ status: "completed", steps: 2, result: anthropicText(second) });
    expect(weather.calls).toEqual([call!.input]);
    expect(server.requests).toHaveLength(2);
    const followUp = body(1);
    const messages = followUp.messages!;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[1]!.content).toEqual([
      { type: "tool_use", id: call!.id, name: call!.name, input: call!.input },
    ]);
    const [toolResult] = messages[2]!.content as Record<string, unknown>[];
    expect(toolResult).toMatchObject({ type: "tool_result", tool_use_id: call!.id });
    expect(toolResult!.is_error).toBeUndefined();
    expect(JSON.parse(String(toolResult!.content))).toEqual({
      temperature_f: 68,
      condition: "Sunny",
    });
    expect(typeof followUp.system).toBe("string");
    expectToolRun(events, result.thread, 2, [call!]);
    expectKeyNeverLogged(server.requests, events, ANTHROPIC_KEY);

    await expectIdenticalReplay(agent, [weather]);
  });

  it("OpenAI Chat Completions: tool_calls → a role:tool message with tool_call_id (7-byte chunks)", async () => {
    const first =
      "openai-chat/raw/openai-python/2018feb66ae13fcf5333d61b95849decc68d3f63bd38172889367e1afb1e04f7.bin";
    const second =
      "openai-chat/raw/openai-node/ChatCompletionStream.test.ts.snap--stream-works-1.sse";
    const [call] = chatToolCalls(first);
    expect(call).toMatchObject({ name: "get_weather", input: { city: "New York City" } });
    const weather = recordingTool(call!.name, (input) => ({ city: input.city, forecast: "rain" }));
    const agent = agentSpec("gpt-4o", [weather.tool]);
    serve([first, second], (bytes) => chunkBytes(bytes, 7));

    const { result, events } = await runTurn(openaiChat(), agent, "Weather in New York?");

    expect(result).toMatchObject({
      status: "completed",
      steps: 2,
      result: chatText(second).content.trim(),
    });
    expect(weather.calls).toEqual([call!.input]);
    expect(server.requests.map((request) => request.url)).toEqual([
      "/v1/chat/completions",
      "/v1/chat/completions",
    ]);
    const messages = body(1).messages!;
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
    ]);
    expect(messages[2]).toMatchObject({
      content: null,
      tool_calls: [
        {
          id: call!.id,
          type: "function",
          function: { name: call!.name, arguments: JSON.stringify(call!.input) },
        },
      ],
    });
    expect(messages[3]).toMatchObject({ role: "tool", tool_call_id: call!.id });
    expect(JSON.parse(String(messages[3]!.content))).toEqual({
      city: "New York City",
      forecast: "rain",
    });
    expectToolRun(events, result.thread, 2, [call!]);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [weather]);
  });

  it("OpenAI Responses: reasoning and three function calls → function_call_output items with call_id, continued from the cursor; encrypted reasoning sent back on a rebuild", async () => {
    const steps = [1, 2, 3, 4].map(
      (n) => `openai-responses/openai-reasoning-encrypted-content.1.response-${n}-of-4.sse`,
    );
    const recorded = steps.slice(0, 3).map((path) => {
      const item = responsesItems(path).find((candidate) => candidate.type === "function_call")!;
      return {
        id: String(item.call_id),
        name: String(item.name),
        input: JSON.parse(String(item.arguments)) as Record<string, unknown>,
      };
    });
    const responseIds = steps.map((path) => responseIdOf(path));
    const calculator = recordingTool("calculator", (input) => {
      const a = Number(input.a);
      const b = Number(input.b);
      return { result: input.op === "add" ? a + b : a * b };
    });
    const agent = agentSpec("gpt-5", [calculator.tool]);
    // The first continued call finds the response gone (as after OpenAI's retention): the
    // runtime rebuilds the whole context from the log, then continues from the new cursor.
    const gone = {
      status: 400,
      headers: { "content-type": "application/json" },
      chunks: [
        JSON.stringify({
          error: {
            message: `Previous response with id '${responseIds[0]}' not found.`,
            type: "invalid_request_error",
            param: "previous_response_id",
            code: "previous_response_not_found",
          },
        }),
      ],
    };
    const sse = (path: string, index: number) => ({
      chunks: randomChunks(fixtureBytes(path), 100 + index, 700),
    });
    server.respond(sse(steps[0]!, 0), gone, ...steps.slice(1).map((path, i) => sse(path, i + 1)));

    const { result, events } = await runTurn(
      fromSettings("openai-responses", "gpt-5"),
      agent,
      "What is (12 + 7) * 3 * 10? Use the calculator.",
    );

    expect(result).toMatchObject({
      status: "completed",
      steps: 4,
      result: responsesText(steps[3]!),
    });
    expect(result.result).toBe("The final result is **570**.");
    expect(calculator.calls).toEqual(recorded.map((call) => call.input));
    expect(server.requests.map((request) => request.url)).toEqual(Array(5).fill("/v1/responses"));
    expect(server.requests.map((_, index) => body(index).previous_response_id)).toEqual([
      undefined,
      responseIds[0],
      undefined,
      responseIds[1],
      responseIds[2],
    ]);
    const outputs = [19, 57, 570];
    // Request 1 (refused) and 3, 4 continue: the function_call_output alone.
    for (const [request, index] of [
      [1, 0],
      [3, 1],
      [4, 2],
    ] as const) {
      const input = body(request).input!;
      expect(input).toEqual([
        expect.objectContaining({ type: "function_call_output", call_id: recorded[index]!.id }),
      ]);
      expect(JSON.parse(String(input[0]!.output))).toEqual({ result: outputs[index] });
    }
    // Request 2 is the whole context rebuilt from the log: the call comes before its output, as
    // the API requires, and the encrypted reasoning of the first step goes back before its call.
    const rebuilt = body(2).input!;
    const output = rebuilt.find(
      (item) => item.type === "function_call_output" && item.call_id === recorded[0]!.id,
    );
    const callItem = rebuilt.find(
      (item) => item.type === "function_call" && item.call_id === recorded[0]!.id,
    );
    expect(callItem).toMatchObject({
      name: "calculator",
      arguments: JSON.stringify(recorded[0]!.input),
    });
    expect(rebuilt.indexOf(callItem!)).toBeLessThan(rebuilt.indexOf(output!));
    const reasoning = responsesItems(steps[0]!).find((item) => item.type === "reasoning")!;
    const sentReasoning = rebuilt.find((item) => item.type === "reasoning");
    expect(sentReasoning).toMatchObject({
      id: reasoning.id,
      encrypted_content: reasoning.encrypted_content,
    });
    expect(rebuilt.indexOf(sentReasoning!)).toBeLessThan(rebuilt.indexOf(callItem!));
    expect(ofType(events, "provider.cursor-rotated").map(dataOf)).toEqual([
      expect.objectContaining({ previous_response_id: responseIds[0], reason: "expired" }),
    ]);
    expectToolRun(events, result.thread, 4, recorded);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [calculator]);
  });

  it("DeepSeek (OpenAI-compatible): reasoning_content and streamed tool arguments → a role:tool message", async () => {
    const first = "deepseek/deepseek-tool-call.sse";
    const second = "deepseek/deepseek-reasoning.sse";
    const [call] = chatToolCalls(first);
    expect(call).toMatchObject({ name: "weather", input: { location: "San Francisco" } });
    const weather = recordingTool(call!.name, () => ({ celsius: 18 }));
    const agent = agentSpec("deepseek-reasoner", [weather.tool]);
    serve([first, second], (bytes, index) => randomChunks(bytes, 7 + index, 300));

    const { result, events } = await runTurn(
      fromSettings("deepseek", "deepseek-reasoner"),
      agent,
      "Weather in San Francisco?",
    );

    expect(result).toMatchObject({
      status: "completed",
      steps: 2,
      result: chatText(second).content.trim(),
    });
    expect(weather.calls).toEqual([call!.input]);
    const messages = body(1).messages!;
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
    ]);
    expect(messages[2]).toMatchObject({
      tool_calls: [{ id: call!.id, function: { name: "weather" } }],
    });
    expect(messages[3]).toMatchObject({ role: "tool", tool_call_id: call!.id });
    expect(JSON.parse(String(messages[3]!.content))).toEqual({ celsius: 18 });
    // The reasoning was logged with the step that called the tool.
    const [firstMessage] = ofType(events, "message.completed");
    expect(dataOf(firstMessage).content).toContainEqual(
      expect.objectContaining({ type: "reasoning", text: chatText(first).reasoning }),
    );
    expectToolRun(events, result.thread, 2, [call!]);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [weather]);
  });

  it("DeepSeek thinking mode: the follow-up of a tool-calling step sends its reasoning_content back", async () => {
    // DeepSeek's thinking-mode guide: for turns that perform tool calls, reasoning_content must be
    // passed back in all subsequent requests, or the API answers 400. The recorded stream is
    // deepseek-reasoner doing exactly that (reasoning_content, then tool_calls).
    const first = "deepseek/deepseek-tool-call.sse";
    const [call] = chatToolCalls(first);
    const weather = recordingTool(call!.name, () => ({ celsius: 18 }));
    const agent = agentSpec("deepseek-reasoner", [weather.tool]);
    serve([first, "deepseek/deepseek-reasoning.sse"]);

    const { result } = await runTurn(
      fromSettings("deepseek", "deepseek-reasoner"),
      agent,
      "Weather in San Francisco?",
    );

    expect(result.status).toBe("completed");
    const assistant = body(1).messages!.find((message) => message.role === "assistant");
    expect(
      assistant?.reasoning_content,
      "DeepSeek thinking mode answers 400 to a tool-call follow-up without reasoning_content (OPENAI_FLAVOURS.deepseek.echoReasoning)",
    ).toBe(chatText(first).reasoning);
  });

  it("Groq (OpenAI-compatible): a tool call with empty arguments in one delta", async () => {
    const first = "groq/groq-tool-call.sse";
    const second = "groq/groq-text.sse";
    const [call] = chatToolCalls(first);
    expect(call).toMatchObject({ name: "weather", input: {} });
    const weather = recordingTool(call!.name, () => "sunny");
    const agent = agentSpec("llama-3.3-70b-versatile", [weather.tool]);
    serve([first, second], (bytes, index) => randomChunks(bytes, 31 + index, 2000));

    const { result, events } = await runTurn(
      fromSettings("groq", "llama-3.3-70b-versatile"),
      agent,
      "Weather?",
    );

    expect(result).toMatchObject({
      status: "completed",
      steps: 2,
      result: chatText(second).content.trim(),
    });
    expect(weather.calls).toEqual([{}]);
    const messages = body(1).messages!;
    expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: call!.id, content: "sunny" });
    expect(messages.at(-2)).toMatchObject({
      tool_calls: [{ id: call!.id, function: { name: "weather", arguments: "{}" } }],
    });
    expectToolRun(events, result.thread, 2, [call!]);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [weather]);
  });
});

describe("thinking, refusals and errors over each provider's SDK", () => {
  it("Anthropic tool input cut off by max_tokens: the tool is not run with made-up input, the model is told", async () => {
    const first = "anthropic/raw/anthropic-sdk-typescript/incomplete_partial_json_response.txt";
    const second = "anthropic/raw/anthropic-sdk-typescript/basic_response.txt";
    const [call] = anthropicToolCalls(first, { partial: true });
    expect(call).toMatchObject({ name: "make_file" });
    const makeFile = recordingTool(call!.name);
    const agent = agentSpec("claude-sonnet-4-5", [makeFile.tool]);
    serve([first, second]);

    const { result, events } = await runTurn(anthropic(), agent, "Write a tax guide to taxes.txt");

    expect(result).toMatchObject({ status: "completed", steps: 2, result: anthropicText(second) });
    const [message] = ofType(events, "message.completed");
    expect(dataOf(message)).toMatchObject({ stop_reason: "max-tokens" });
    const toolResult = (body(1).messages!.at(-1)!.content as Record<string, unknown>[]).find(
      (block) => block.type === "tool_result",
    );
    expect(toolResult).toMatchObject({ tool_use_id: call!.id });
    expect(decisions(events)).toEqual(["continue", "complete"]);
    expectKeyNeverLogged(server.requests, events, ANTHROPIC_KEY);
    await expectIdenticalReplay(agent, [makeFile]);

    expect(
      makeFile.calls,
      "a tool call whose input did not parse (cut by max_tokens) must not run with made-up parameters (agent-step.ts)",
    ).toEqual([]);
    expect(toolResult).toMatchObject({ is_error: true });
  });

  it("Anthropic thinking with a signature: logged as signed reasoning, the text is the answer", async () => {
    const path = "anthropic/anthropic-clear-thinking.1.sse";
    const thinking = anthropicThinking(path);
    expect(thinking.signature).not.toBe("");
    const agent = agentSpec("claude-sonnet-4-5", []);
    serve([path], (bytes) => randomChunks(bytes, 5, 50));

    const { result, events } = await runTurn(anthropic(), agent, "Think, then answer.");

    expect(result).toMatchObject({ status: "completed", steps: 1, result: anthropicText(path) });
    const [message] = ofType(events, "message.completed");
    expect(dataOf(message).content).toEqual([
      { type: "reasoning", text: thinking.text, signature: thinking.signature },
      { type: "text", text: anthropicText(path) },
    ]);
    expect(decisions(events)).toEqual(["complete"]);
    expectKeyNeverLogged(server.requests, events, ANTHROPIC_KEY);

    await expectIdenticalReplay(agent);
  });

  it("OpenAI Responses reasoning summaries: logged as reasoning, the message text is the answer", async () => {
    const path = "openai-responses/github-copilot-id-rotation.1.sse";
    const agent = agentSpec("gpt-5", []);
    serve([path]);

    const { result, events } = await runTurn(
      fromSettings("openai-responses", "gpt-5"),
      agent,
      "Reason about it.",
    );

    expect(result).toMatchObject({ status: "completed", steps: 1, result: responsesText(path) });
    const [message] = ofType(events, "message.completed");
    const content = dataOf(message).content as Record<string, unknown>[];
    const summaries = responsesItems(path)
      .filter((item) => item.type === "reasoning")
      .flatMap((item) => (item.summary ?? []) as Record<string, unknown>[])
      .map((part) => part.text);
    expect(summaries.length).toBeGreaterThan(0);
    expect(
      content.filter((block) => block.type === "reasoning").map((block) => block.text),
    ).toEqual(summaries);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent);
  });

  it("Anthropic thinking then a refusal: the run completes with the text before the refusal", async () => {
    const path = "anthropic/synthetic/stream-a-refusal.sse";
    const agent = agentSpec("claude-sonnet-4-5", []);
    serve([path]);

    const { result, events } = await runTurn(anthropic(), agent, "What is an eclipse, claudius?");

    expect(result).toMatchObject({ status: "completed", steps: 1, result: anthropicText(path) });
    const [message] = ofType(events, "message.completed");
    expect(dataOf(message)).toMatchObject({
      stop_reason: "refusal",
      provider_stop_reason: "refusal",
    });
    expectKeyNeverLogged(server.requests, events, ANTHROPIC_KEY);

    await expectIdenticalReplay(agent);
  });

  it("OpenAI Chat refusal: the refusal is logged as its own block and the run ends", async () => {
    const path =
      "openai-chat/raw/openai-python/173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin";
    const refusal = chatRefusal(path);
    const agent = agentSpec("gpt-4o", []);
    serve([path]);

    const { result, events } = await runTurn(openaiChat(), agent, "Something forbidden.");

    // The runtime takes a message without protocol tags as the answer: a refusal has no text, so
    // the run completes with an empty result (the refusal stays in the log).
    expect(result).toMatchObject({ status: "completed", steps: 1, result: "" });
    const [message] = ofType(events, "message.completed");
    expect(dataOf(message).content).toEqual([{ type: "refusal", text: refusal }]);
    expect(decisions(events)).toEqual(["complete"]);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent);
  });

  it("OpenAI Responses error event (insufficient_quota): the run fails with provider.auth", async () => {
    const path = "openai-responses/openai-error.1.sse";
    const agent = agentSpec("gpt-5", []);
    serve([path]);

    const { result, events } = await runTurn(
      fromSettings("openai-responses", "gpt-5"),
      agent,
      "Hello?",
    );

    expect(result).toMatchObject({ status: "failed", steps: 1 });
    expect(result.error?.code).toBe("provider.auth");
    const [failed] = ofType(events, "message.failed");
    expect(dataOf(failed).error).toMatchObject({ code: "provider.auth", retryable: false });
    const [run] = ofType(events, "run.completed");
    expect(dataOf(run)).toMatchObject({ status: "failed", error: { code: "provider.auth" } });
    expect(decisions(events)).toEqual(["fail"]);
    expect(server.requests).toHaveLength(1);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [], REPLAY_FAILED_CALL_BUG);
  });

  it("Anthropic overloaded_error mid-stream: the run fails with provider.overloaded", async () => {
    const path = "anthropic/anthropic-text.sse";
    const frames = fixtureBytes(path)
      .toString("utf8")
      .split(/(?<=\n\n)/);
    const cut = frames.findIndex((frame) => frame.includes("content_block_stop"));
    const agent = agentSpec("claude-sonnet-4-5", []);
    server.respond({ chunks: [...frames.slice(0, cut), OVERLOADED_FRAME] });

    const { result, events } = await runTurn(anthropic(), agent, "Say something.");

    expect(result).toMatchObject({ status: "failed", error: { code: "provider.overloaded" } });
    const [run] = ofType(events, "run.completed");
    expect(dataOf(run)).toMatchObject({ status: "failed", error: { code: "provider.overloaded" } });
    expect(ofType(events, "message.completed")).toEqual([]);
    expectKeyNeverLogged(server.requests, events, ANTHROPIC_KEY);

    await expectIdenticalReplay(agent, [], REPLAY_FAILED_CALL_BUG);
  });

  it("an HTTP 401 whose body echoes the key: the run fails with provider.auth and the key stays out of the log", async () => {
    const agent = agentSpec("gpt-4o", []);
    server.respond({
      status: 401,
      headers: { "content-type": "application/json" },
      chunks: [
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${OPENAI_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        }),
      ],
    });

    const { result, events } = await runTurn(openaiChat(), agent, "Hello?");

    expect(result).toMatchObject({ status: "failed", error: { code: "provider.auth" } });
    const [failed] = ofType(events, "message.failed");
    expect(dataOf(failed).error).toMatchObject({ code: "provider.auth", status: 401 });
    expect(server.requests).toHaveLength(1);
    expectKeyNeverLogged(server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [], REPLAY_FAILED_CALL_BUG);
  });
});

/** The `refusal` text a Chat Completions stream's deltas spell. */
function chatRefusal(path: string): string {
  return fixtureBytes(path)
    .toString("utf8")
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .flatMap(
      (line) => (JSON.parse(line.slice(6)).choices ?? []) as { delta?: { refusal?: unknown } }[],
    )
    .map((choice) => choice.delta?.refusal)
    .filter((text): text is string => typeof text === "string")
    .join("");
}
