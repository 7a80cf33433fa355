import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_OUTPUT_TOKENS, toAnthropicParams } from "../src/providers/anthropic/index.js";
import type { ProviderMessage, ProviderRequest } from "../src/providers/index.js";

const base: ProviderRequest = {
  model: "claude-sonnet-5",
  messages: [{ role: "user", content: "Hello" }],
};

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

describe("toAnthropicParams: the request", () => {
  it("a minimal request: model, max_tokens 4096, the messages, nothing else", () => {
    expect(DEFAULT_MAX_OUTPUT_TOKENS).toBe(4096);
    expect(toAnthropicParams(base)).toEqual({
      model: "claude-sonnet-5",
      max_tokens: 4096,
      messages: [user("Hello")],
    });
  });

  it("max_tokens: the request's, else the provider default, else 4096", () => {
    expect(toAnthropicParams(base, { maxOutputTokens: 8000 }).max_tokens).toBe(8000);
    expect(
      toAnthropicParams({ ...base, maxOutputTokens: 100 }, { maxOutputTokens: 8000 }),
    ).toMatchObject({ max_tokens: 100 });
  });

  it("system, temperature (0 included), stop sequences and a thinking budget", () => {
    const params = toAnthropicParams({
      ...base,
      system: "Be brief.",
      temperature: 0,
      stopSequences: ["</done>"],
      reasoning: { budgetTokens: 2048 },
    });
    expect(params).toMatchObject({
      system: "Be brief.",
      temperature: 0,
      stop_sequences: ["</done>"],
      thinking: { type: "enabled", budget_tokens: 2048 },
    });
  });

  it("empty system and stop sequences are left out; effort and previousResponseId have no Anthropic form", () => {
    const params = toAnthropicParams({
      ...base,
      system: "",
      stopSequences: [],
      tools: [],
      reasoning: { effort: "high" },
      previousResponseId: "resp_1",
    });
    expect(Object.keys(params).sort()).toEqual(["max_tokens", "messages", "model"]);
  });

  it("tools → name, description, input_schema", () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const params = toAnthropicParams({
      ...base,
      tools: [
        { name: "weather", description: "The weather in a city", inputSchema: schema },
        { name: "now", inputSchema: { type: "object" } },
      ],
    });
    expect(params.tools).toEqual([
      { name: "weather", description: "The weather in a city", input_schema: schema },
      { name: "now", input_schema: { type: "object" } },
    ]);
  });

  it("providerOptions are merged last, over the mapped fields", () => {
    const params = toAnthropicParams({
      ...base,
      maxOutputTokens: 100,
      providerOptions: { max_tokens: 50, metadata: { user_id: "u1" } },
    });
    expect(params).toMatchObject({ max_tokens: 50, metadata: { user_id: "u1" } });
  });

  it("is pure: the request is left as it was and the same request gives the same body", () => {
    const request: ProviderRequest = {
      ...base,
      messages: [
        { role: "user", content: "a" },
        { role: "user", content: "b" },
        { role: "tool", results: [{ toolCallId: "t1", output: "ok" }] },
      ],
      stopSequences: ["x"],
    };
    const copy = structuredClone(request);
    const first = toAnthropicParams(request);
    expect(request).toEqual(copy);
    expect(toAnthropicParams(request)).toEqual(first);
  });
});

describe("toAnthropicParams: messages", () => {
  const map = (...messages: ProviderMessage[]) => toAnthropicParams({ ...base, messages }).messages;

  it("user text and base64 images", () => {
    expect(
      map({
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
        ],
      }),
    ).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
          },
        ],
      },
    ]);
  });

  it("assistant blocks: text, signed reasoning → thinking, redacted, tool calls, refusal, provider data", () => {
    const [, assistant] = map(
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Think.", signature: "sig" },
          { type: "redacted-reasoning", data: "opaque" },
          { type: "text", text: "Calling." },
          {
            type: "tool-call",
            id: "toolu_1",
            name: "weather",
            input: { city: "Oslo" },
            inputText: '{"city":"Oslo"}',
          },
          {
            type: "tool-call",
            id: "srvtoolu_1",
            name: "web_search",
            input: { query: "q" },
            inputText: '{"query":"q"}',
            server: true,
          },
          {
            type: "provider",
            kind: "web_search_tool_result",
            data: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
          },
          { type: "refusal", text: "I can't." },
        ],
      },
    );
    expect(assistant).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Think.", signature: "sig" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Calling." },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } },
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "text", text: "I can't." },
      ],
    });
  });

  it("unsigned reasoning, empty text and provider data that is no Anthropic block are dropped", () => {
    const [, assistant] = map(
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "An OpenAI summary", summary: true },
          { type: "text", text: "" },
          { type: "provider", kind: "odd", data: "not a block" },
          { type: "text", text: "Kept." },
        ],
      },
    );
    expect(assistant).toEqual({ role: "assistant", content: [{ type: "text", text: "Kept." }] });
  });

  it("a tool call whose input did not parse (or is not an object) is sent with input {}", () => {
    const [, assistant] = map(
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            id: "toolu_1",
            name: "f",
            inputText: '{"a":',
            inputError: "Unexpected end",
          },
          { type: "tool-call", id: "toolu_2", name: "g", input: [1, 2], inputText: "[1,2]" },
        ],
      },
    );
    expect(assistant?.content).toEqual([
      { type: "tool_use", id: "toolu_1", name: "f", input: {} },
      { type: "tool_use", id: "toolu_2", name: "g", input: {} },
    ]);
  });

  it("tool results → a user message of tool_result blocks, is_error only on failures", () => {
    expect(
      map(
        { role: "user", content: "go" },
        { role: "assistant", content: "calling" },
        {
          role: "tool",
          results: [
            { toolCallId: "toolu_1", output: "12°C" },
            { toolCallId: "toolu_2", output: "no such city", isError: true },
          ],
        },
      ).at(-1),
    ).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "12°C" },
        { type: "tool_result", tool_use_id: "toolu_2", content: "no such city", is_error: true },
      ],
    });
  });

  it("consecutive messages of one role are merged, tool results first", () => {
    expect(
      map(
        { role: "user", content: "a" },
        { role: "user", content: "b" },
        { role: "assistant", content: "c" },
        { role: "assistant", content: [{ type: "text", text: "d" }] },
        { role: "tool", results: [{ toolCallId: "t", output: "r" }] },
        { role: "user", content: "e" },
      ),
    ).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "c" },
          { type: "text", text: "d" },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t", content: "r" },
          { type: "text", text: "e" },
        ],
      },
    ]);
  });

  it("a message left empty is dropped, and its neighbours merge", () => {
    expect(
      map(
        { role: "user", content: "a" },
        { role: "assistant", content: [{ type: "text", text: "" }] },
        { role: "user", content: "b" },
      ),
    ).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
    ]);
  });
});
