/**
 * The agent runtime end to end, tool calls: each provider SDK reads a recorded tool-calling stream
 * from a loopback server, the runtime runs the calls and sends the results back in the provider
 * format, and the continuity replays identical without the server or a tool.
 */
import { describe, expect, it } from "vitest";
import { ANTHROPIC_KEY, OPENAI_KEY, responseIdOf, useProviderE2e } from "./support/provider-e2e.js";
import { chunkBytes, fixtureBytes, randomChunks } from "./support/replay-server.js";
import {
  agentSpec,
  anthropicText,
  anthropicToolCalls,
  chatText,
  chatToolCalls,
  dataOf,
  expectKeyNeverLogged,
  expectToolRun,
  ofType,
  recordingTool,
  responsesItems,
  responsesText,
} from "./support/runtime-e2e.js";

const _REPLAY_FAILED_CALL_BUG =
  "a failed model call must replay with its error fields, partial output, model and usage (replay-provider.ts play())";

const e2e = useProviderE2e();
const { anthropic, openaiChat, fromSettings, serve, runTurn, body, expectIdenticalReplay } = e2e;

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
    expect(e2e.server.requests).toHaveLength(2);
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
    expectKeyNeverLogged(e2e.server.requests, events, ANTHROPIC_KEY);

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
    expect(e2e.server.requests.map((request) => request.url)).toEqual([
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
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

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
    e2e.server.respond(
      sse(steps[0]!, 0),
      gone,
      ...steps.slice(1).map((path, i) => sse(path, i + 1)),
    );

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
    expect(e2e.server.requests.map((request) => request.url)).toEqual(
      Array(5).fill("/v1/responses"),
    );
    expect(e2e.server.requests.map((_, index) => body(index).previous_response_id)).toEqual([
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
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

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
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

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
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [weather]);
  });
});
