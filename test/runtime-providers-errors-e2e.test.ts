/**
 * The agent runtime end to end, thinking, refusals and errors: each provider SDK reads a recorded
 * stream from a loopback server and the run logs and ends as the stream says.
 */
import { describe, expect, it } from "vitest";
import { OVERLOADED_FRAME } from "./support/anthropic-sse.js";
import { ANTHROPIC_KEY, OPENAI_KEY, useProviderE2e } from "./support/provider-e2e.js";
import { fixtureBytes, randomChunks } from "./support/replay-server.js";
import {
  agentSpec,
  anthropicText,
  anthropicThinking,
  anthropicToolCalls,
  dataOf,
  decisions,
  expectKeyNeverLogged,
  ofType,
  recordingTool,
  responsesItems,
  responsesText,
} from "./support/runtime-e2e.js";

const REPLAY_FAILED_CALL_BUG =
  "a failed model call must replay with its error fields, partial output, model and usage (replay-provider.ts play())";

const e2e = useProviderE2e();
const { anthropic, openaiChat, fromSettings, serve, runTurn, body, expectIdenticalReplay } = e2e;

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
    expectKeyNeverLogged(e2e.server.requests, events, ANTHROPIC_KEY);
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
    expectKeyNeverLogged(e2e.server.requests, events, ANTHROPIC_KEY);

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
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

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
    expectKeyNeverLogged(e2e.server.requests, events, ANTHROPIC_KEY);

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
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

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
    expect(e2e.server.requests).toHaveLength(1);
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

    await expectIdenticalReplay(agent, [], REPLAY_FAILED_CALL_BUG);
  });

  it("Anthropic overloaded_error mid-stream: the run fails with provider.overloaded", async () => {
    const path = "anthropic/anthropic-text.sse";
    const frames = fixtureBytes(path)
      .toString("utf8")
      .split(/(?<=\n\n)/);
    const cut = frames.findIndex((frame) => frame.includes("content_block_stop"));
    const agent = agentSpec("claude-sonnet-4-5", []);
    e2e.server.respond({ chunks: [...frames.slice(0, cut), OVERLOADED_FRAME] });

    const { result, events } = await runTurn(anthropic(), agent, "Say something.");

    expect(result).toMatchObject({ status: "failed", error: { code: "provider.overloaded" } });
    const [run] = ofType(events, "run.completed");
    expect(dataOf(run)).toMatchObject({ status: "failed", error: { code: "provider.overloaded" } });
    expect(ofType(events, "message.completed")).toEqual([]);
    expectKeyNeverLogged(e2e.server.requests, events, ANTHROPIC_KEY);

    await expectIdenticalReplay(agent, [], REPLAY_FAILED_CALL_BUG);
  });

  it("an HTTP 401 whose body echoes the key: the run fails with provider.auth and the key stays out of the log", async () => {
    const agent = agentSpec("gpt-4o", []);
    e2e.server.respond({
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
    expect(e2e.server.requests).toHaveLength(1);
    expectKeyNeverLogged(e2e.server.requests, events, OPENAI_KEY);

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
