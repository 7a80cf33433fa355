import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { assembleMessage, ProviderError, type StreamPart } from "../src/providers/index.js";
import { ChatStreamDecoder, ResponsesStreamDecoder } from "../src/providers/openai/index.js";

// Cases no recording covers (see the fixture READMEs' "Not covered"), fed to the decoders
// directly: hand-written chunks, one decoder per case.

function chat(flavour: ConstructorParameters<typeof ChatStreamDecoder>[0], chunks: object[]) {
  const decoder = new ChatStreamDecoder(flavour);
  const parts: StreamPart[] = chunks.flatMap((chunk) => decoder.push(chunk));
  parts.push(...decoder.end());
  return { parts, message: assembleMessage("openai-chat", parts) };
}

const choice = (delta: object, finish_reason: string | null = null) => ({
  id: "chatcmpl-1",
  model: "m",
  choices: [{ index: 0, delta, finish_reason }],
});

function responses(events: object[]) {
  const decoder = new ResponsesStreamDecoder();
  const parts = events.flatMap((event) => decoder.push(event as ResponseStreamEvent));
  return { parts, message: assembleMessage("openai-responses", parts) };
}

const created = { type: "response.created", response: { id: "resp_1", model: "m" } };

describe("Chat Completions decoder cases", () => {
  it("finish_reason content_filter is a content-filter stop", () => {
    const { message } = chat("openai", [choice({ content: "Hel" }), choice({}, "content_filter")]);
    expect(message).toMatchObject({
      stopReason: "content-filter",
      providerStopReason: "content_filter",
    });
  });

  it("parallel calls that all say index 0 still come apart by their ids", () => {
    const call = (id: string | undefined, name: string | undefined, args: string) => ({
      tool_calls: [
        {
          index: 0,
          ...(id ? { id } : {}),
          function: { ...(name ? { name } : {}), arguments: args },
        },
      ],
    });
    const { message } = chat("compatible", [
      choice(call("call_a", "first", '{"a":')),
      choice(call(undefined, undefined, "1}")),
      choice(call("call_b", "second", '{"b":2}')),
      choice({}, "tool_calls"),
    ]);
    expect(message.content).toMatchObject([
      { type: "tool-call", id: "call_a", name: "first", input: { a: 1 } },
      { type: "tool-call", id: "call_b", name: "second", input: { b: 2 } },
    ]);
  });

  it("a server sending reasoning_content and reasoning with the same text is read once", () => {
    const { message } = chat("vllm", [
      choice({ reasoning_content: "Hmm.", reasoning: "Hmm." }),
      choice({ content: "Yes." }, "stop"),
    ]);
    expect(message.content).toEqual([
      { type: "reasoning", text: "Hmm." },
      { type: "text", text: "Yes." },
    ]);
  });

  it("every flavour reads both reasoning fields, its own first, and one delta's reasoning once", () => {
    // A server reached through the openai flavour (OPENAI_BASE_URL at xAI, Cerebras, Azure) still
    // has its reasoning read; a delta with both spellings counts once, in the flavour's preference.
    const { message } = chat("openai", [
      choice({ reasoning: "x" }),
      choice({ reasoning_content: "z" }),
      choice({ content: "y" }, "stop"),
    ]);
    expect(message.content).toEqual([
      { type: "reasoning", text: "xz" },
      { type: "text", text: "y" },
    ]);
    const both = choice({ reasoning_content: "a", reasoning: "b" });
    expect(chat("groq", [both, choice({}, "stop")]).message.content).toEqual([
      { type: "reasoning", text: "b" },
    ]);
    expect(chat("deepseek", [both, choice({}, "stop")]).message.content).toEqual([
      { type: "reasoning", text: "a" },
    ]);
  });

  it("a tool call with arguments but no id or name still ends, with a made-up id", () => {
    const { message } = chat("compatible", [
      choice({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }),
      choice({}, "tool_calls"),
    ]);
    expect(message.content).toEqual([
      { type: "tool-call", id: "call_0", name: "", input: {}, inputText: "{}" },
    ]);
  });

  it("Moonshot usage inside the finishing choice is read", () => {
    const { message } = chat("moonshot", [
      {
        id: "c",
        model: "kimi",
        choices: [
          {
            index: 0,
            delta: { content: "Hi" },
            finish_reason: "stop",
            usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
          },
        ],
      },
    ]);
    expect(message.usage).toMatchObject({ inputTokens: 5, outputTokens: 2 });
  });

  it("a chunk of the wrong shape is provider.bad-stream", () => {
    const decoder = new ChatStreamDecoder("openai", "groq");
    expect(() => decoder.push({ id: "c", choices: "nope" })).toThrow(ProviderError);
    expect(() => decoder.push({ id: "c", choices: "nope" })).toThrow(/^groq: /);
  });

  it("no finish_reason means no stop: the runner reports the stream as cut", () => {
    const { parts } = chat("openai", [choice({ content: "Hi" })]);
    expect(parts.map((part) => part.type)).toEqual(["start", "text"]);
  });
});

describe("Responses decoder cases", () => {
  it("response.incomplete with max_output_tokens is a max-tokens stop after the usage", () => {
    const { parts, message } = responses([
      created,
      { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "Lo" },
      {
        type: "response.incomplete",
        response: {
          id: "resp_1",
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
          output: [],
          usage: {
            input_tokens: 10,
            output_tokens: 16,
            input_tokens_details: { cached_tokens: 4 },
            output_tokens_details: { reasoning_tokens: 12 },
          },
        },
      },
    ]);
    expect(parts.slice(-2).map((part) => part.type)).toEqual(["usage", "stop"]);
    expect(message).toMatchObject({
      stopReason: "max-tokens",
      providerStopReason: "max_output_tokens",
      usage: { inputTokens: 10, outputTokens: 16, cacheReadTokens: 4, reasoningTokens: 12 },
    });
  });

  it("response.incomplete with content_filter is a content-filter stop", () => {
    const { message } = responses([
      created,
      {
        type: "response.incomplete",
        response: { status: "incomplete", incomplete_details: { reason: "content_filter" } },
      },
    ]);
    expect(message.stopReason).toBe("content-filter");
  });

  it("refusal deltas are a refusal block and a refusal stop", () => {
    const { message } = responses([
      created,
      { type: "response.refusal.delta", output_index: 0, content_index: 0, delta: "I can't " },
      { type: "response.refusal.delta", output_index: 0, content_index: 0, delta: "help." },
      { type: "response.completed", response: { status: "completed", output: [] } },
    ]);
    expect(message.content).toEqual([{ type: "refusal", text: "I can't help." }]);
    expect(message.stopReason).toBe("refusal");
  });

  it("two summary parts of one reasoning item are two blocks; the signature goes on the first", () => {
    const item = {
      type: "reasoning",
      id: "rs_1",
      summary: [
        { type: "summary_text", text: "A" },
        { type: "summary_text", text: "B" },
      ],
      encrypted_content: "enc",
      status: "completed",
    };
    const { message } = responses([
      created,
      { type: "response.output_item.added", output_index: 0, item: { ...item, summary: [] } },
      {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        summary_index: 0,
        delta: "A",
      },
      {
        type: "response.reasoning_summary_text.delta",
        output_index: 0,
        summary_index: 1,
        delta: "B",
      },
      { type: "response.output_item.done", output_index: 0, item },
      { type: "response.completed", response: { status: "completed", output: [] } },
    ]);
    const { status: _status, ...signed } = item;
    expect(message.content).toEqual([
      { type: "reasoning", text: "A", summary: true, signature: JSON.stringify(signed) },
      { type: "reasoning", text: "B", summary: true },
    ]);
  });

  it("a reasoning item with encrypted content and no summary still leaves a signed block", () => {
    const item = { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "enc" };
    const { message } = responses([
      created,
      { type: "response.output_item.added", output_index: 0, item },
      { type: "response.output_item.done", output_index: 0, item },
      { type: "response.completed", response: { status: "completed", output: [] } },
    ]);
    expect(message.content).toEqual([
      { type: "reasoning", text: "", signature: JSON.stringify(item) },
    ]);
  });

  it("text that arrives only in the finished message item is kept", () => {
    const { message } = responses([
      created,
      {
        type: "response.output_item.done",
        output_index: 0,
        item: {
          type: "message",
          content: [{ type: "output_text", text: "Whole.", annotations: [] }],
        },
      },
      { type: "response.completed", response: { status: "completed", output: [] } },
    ]);
    expect(message.content).toEqual([{ type: "text", text: "Whole." }]);
  });

  it("an error event with a code throws a ProviderError with that meaning", () => {
    const decoder = new ResponsesStreamDecoder("openai-responses", ["sk-secret-value-123"]);
    decoder.push(created as ResponseStreamEvent);
    expect(() =>
      decoder.push({
        type: "error",
        code: "server_error",
        message: "failed with sk-secret-value-123",
        param: null,
        sequence_number: 1,
      }),
    ).toThrow(
      expect.objectContaining({
        code: "provider.server-error",
        message: expect.not.stringContaining("sk-secret-value-123"),
      }),
    );
  });
});
