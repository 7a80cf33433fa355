import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContentBlock, ProviderRequest } from "../src/providers/index.js";
import {
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  NO_KEY_PLACEHOLDER,
  OPENAI_FLAVOURS,
  type OpenAIFlavourName,
  resolveApiKey,
  toChatRequest,
  toResponsesRequest,
} from "../src/providers/openai/index.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

// Request mapping: ProviderRequest → Chat Completions and Responses bodies, per flavour, and what
// actually goes over HTTP.

const FLAVOURS = Object.keys(OPENAI_FLAVOURS) as OpenAIFlavourName[];

const ASSISTANT: ContentBlock[] = [
  { type: "reasoning", text: "Think first." },
  { type: "text", text: "Let me look." },
  {
    type: "tool-call",
    id: "call_1",
    name: "read_file",
    input: { path: "a.txt" },
    inputText: '{"path":"a.txt"}',
  },
  { type: "tool-call", id: "srv_1", name: "web_search", input: {}, inputText: "", server: true },
  { type: "tool-call", id: "call_2", name: "list", input: {}, inputText: "" },
];

const REQUEST: ProviderRequest = {
  model: "gpt-test",
  system: "Be brief.",
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "What is in a.txt?" },
        { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
      ],
    },
    { role: "assistant", content: ASSISTANT },
    {
      role: "tool",
      results: [
        { toolCallId: "call_1", output: "hello" },
        { toolCallId: "call_2", output: "a.txt", isError: false },
      ],
    },
  ],
  tools: [
    {
      name: "read_file",
      description: "Read a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    },
  ],
  maxOutputTokens: 1000,
  temperature: 0.5,
  stopSequences: ["END"],
  reasoning: { effort: "low" },
};

type Json = Record<string, unknown>;

describe("Chat Completions requests", () => {
  it("maps system, user parts, assistant tool calls and tool results for OpenAI", () => {
    const body = toChatRequest(REQUEST, "openai") as unknown as Json;
    expect(body).toEqual({
      model: "gpt-test",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is in a.txt?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          ],
        },
        {
          role: "assistant",
          content: "Let me look.",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "read_file", arguments: '{"path":"a.txt"}' },
            },
            { id: "call_2", type: "function", function: { name: "list", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "hello" },
        { role: "tool", tool_call_id: "call_2", content: "a.txt" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "read_file",
            description: "Read a file",
            parameters: { type: "object", properties: { path: { type: "string" } } },
          },
        },
      ],
      max_completion_tokens: 1000,
      temperature: 0.5,
      stop: ["END"],
      reasoning_effort: "low",
    });
  });

  it.each(FLAVOURS)("%s: its max-tokens field, include_usage and reasoning effort", (flavour) => {
    const body = toChatRequest(REQUEST, flavour) as unknown as Json;
    const expected = flavour === "openai" ? "max_completion_tokens" : "max_tokens";
    expect(OPENAI_FLAVOURS[flavour].maxTokensField).toBe(expected);
    expect(body[expected]).toBe(1000);
    expect(
      body[expected === "max_tokens" ? "max_completion_tokens" : "max_tokens"],
    ).toBeUndefined();
    expect(body.stream_options).toEqual(
      OPENAI_FLAVOURS[flavour].includeUsage ? { include_usage: true } : undefined,
    );
    expect(body.reasoning_effort).toEqual(flavour === "openai" ? "low" : undefined);
  });

  it("never sends reasoning_content back to OpenAI or Groq", () => {
    for (const flavour of ["openai", "groq"] as const) {
      const messages = toChatRequest(REQUEST, flavour).messages as unknown as Json[];
      expect(messages.some((message) => "reasoning_content" in message)).toBe(false);
    }
  });

  it.each(["moonshot", "deepseek"] as const)(
    "echoes reasoning as reasoning_content for %s (its tool-calling turns need it back)",
    (flavour) => {
      const messages = toChatRequest(REQUEST, flavour).messages as unknown as Json[];
      expect(messages.find((message) => message.role === "assistant")).toMatchObject({
        reasoning_content: "Think first.",
      });
    },
  );

  it("sends null content with only tool calls, and the refusal field for a refusal", () => {
    const request: ProviderRequest = {
      model: "m",
      messages: [
        {
          role: "assistant",
          content: [{ type: "tool-call", id: "c", name: "f", input: {}, inputText: "{}" }],
        },
        { role: "assistant", content: [{ type: "refusal", text: "No." }] },
        { role: "assistant", content: "plain" },
      ],
    };
    expect(toChatRequest(request).messages).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "assistant", content: null, refusal: "No." },
      { role: "assistant", content: "plain" },
    ]);
  });

  it("merges providerOptions last, over the mapped fields", () => {
    const body = toChatRequest(
      { ...REQUEST, providerOptions: { temperature: 1, seed: 7, stream_options: null } },
      "openai",
    ) as unknown as Json;
    expect(body).toMatchObject({ temperature: 1, seed: 7, stream_options: null });
  });
});

describe("Responses requests", () => {
  const signature = JSON.stringify({
    type: "reasoning",
    id: "rs_1",
    summary: [{ type: "summary_text", text: "Thought." }],
    encrypted_content: "gAAAA-secret",
  });

  it("maps instructions, input items, tools and settings", () => {
    const body = toResponsesRequest({
      ...REQUEST,
      messages: [
        ...REQUEST.messages.slice(0, 1),
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "Thought.", summary: true, signature },
            { type: "reasoning", text: "no signature: dropped" },
            ...ASSISTANT.slice(1),
            { type: "refusal", text: "Not that." },
            { type: "provider", kind: "web_search_call", data: { type: "web_search_call" } },
            {
              type: "provider",
              kind: "compaction",
              data: { type: "compaction", id: "cmp_1", encrypted_content: "enc" },
            },
          ],
        },
        ...REQUEST.messages.slice(2),
      ],
    }) as unknown as Json;
    expect(body).toEqual({
      model: "gpt-test",
      stream: true,
      store: true,
      instructions: "Be brief.",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is in a.txt?" },
            {
              type: "input_image",
              image_url: "data:image/png;base64,iVBORw0KGgo=",
              detail: "auto",
            },
          ],
        },
        {
          type: "reasoning",
          id: "rs_1",
          summary: [{ type: "summary_text", text: "Thought." }],
          encrypted_content: "gAAAA-secret",
        },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "Let me look." }],
        },
        {
          type: "function_call",
          call_id: "call_1",
          name: "read_file",
          arguments: '{"path":"a.txt"}',
        },
        { type: "function_call", call_id: "call_2", name: "list", arguments: "{}" },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "refusal", refusal: "Not that." }],
        },
        { type: "compaction", id: "cmp_1", encrypted_content: "enc" },
        { type: "function_call_output", call_id: "call_1", output: "hello" },
        { type: "function_call_output", call_id: "call_2", output: "a.txt" },
      ],
      tools: [
        {
          type: "function",
          name: "read_file",
          description: "Read a file",
          parameters: { type: "object", properties: { path: { type: "string" } } },
          strict: false,
        },
      ],
      max_output_tokens: 1000,
      temperature: 0.5,
      reasoning: { effort: "low", summary: "auto" },
    });
  });

  it("drops a reasoning signature without encrypted content", () => {
    const stored = JSON.stringify({
      type: "reasoning",
      id: "rs_2",
      summary: [],
      encrypted_content: null,
    });
    const body = toResponsesRequest({
      model: "m",
      messages: [
        { role: "assistant", content: [{ type: "reasoning", text: "", signature: stored }] },
      ],
    });
    expect(body.input).toEqual([]);
  });

  it("continues from previousResponseId with only the messages given", () => {
    const body = toResponsesRequest({
      model: "m",
      previousResponseId: "resp_9",
      messages: [{ role: "user", content: "next" }],
      providerOptions: { store: false, include: ["reasoning.encrypted_content"] },
    }) as unknown as Json;
    expect(body).toEqual({
      model: "m",
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
      previous_response_id: "resp_9",
      input: [{ role: "user", content: "next" }],
    });
  });
});

describe("keys, base URLs and what goes over HTTP", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(FLAVOURS)("%s: a key is required only by hosted servers", (flavour) => {
    const local = ["ollama", "vllm", "llamacpp", "compatible"].includes(flavour);
    expect(OPENAI_FLAVOURS[flavour].requiresKey).toBe(!local);
    if (local) expect(resolveApiKey(flavour, undefined, {})).toBe(NO_KEY_PLACEHOLDER);
    else
      expect(() => resolveApiKey(flavour, undefined, {})).toThrow(
        OPENAI_FLAVOURS[flavour].apiKeyEnv,
      );
    const env = { [OPENAI_FLAVOURS[flavour].apiKeyEnv]: "from-env" };
    expect(resolveApiKey(flavour, undefined, env)).toBe("from-env");
    expect(resolveApiKey(flavour, "from-option", env)).toBe("from-option");
  });

  it("has the documented default base URLs and key variables", () => {
    expect(OPENAI_FLAVOURS.ollama.baseURL).toBe("http://127.0.0.1:11434/v1");
    expect(OPENAI_FLAVOURS.vllm.baseURL).toBe("http://127.0.0.1:8000/v1");
    expect(OPENAI_FLAVOURS.llamacpp.baseURL).toBe("http://127.0.0.1:8080/v1");
    expect(OPENAI_FLAVOURS.groq).toMatchObject({
      baseURL: "https://api.groq.com/openai/v1",
      apiKeyEnv: "GROQ_API_KEY",
      reasoningFields: ["reasoning"],
    });
    expect(OPENAI_FLAVOURS.deepseek).toMatchObject({
      baseURL: "https://api.deepseek.com",
      apiKeyEnv: "DEEPSEEK_API_KEY",
      reasoningFields: ["reasoning_content"],
      echoReasoning: true,
    });
    expect(OPENAI_FLAVOURS.mistral.apiKeyEnv).toBe("MISTRAL_API_KEY");
    expect(OPENAI_FLAVOURS.moonshot.baseURL).toBe("https://api.moonshot.ai/v1");
    expect(OPENAI_FLAVOURS.openrouter.apiKeyEnv).toBe("OPENROUTER_API_KEY");
    expect(OPENAI_FLAVOURS.compatible.reasoningFields).toEqual(["reasoning_content", "reasoning"]);
  });

  const STOP_CHUNK = `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;

  it("a local server gets the placeholder key, the headers and the mapped body", async () => {
    const provider = createOpenAIChatProvider({
      flavour: "ollama",
      baseURL: `${server.url}/v1`,
      headers: { "x-spool": "1" },
      env: {},
    });
    expect(provider).toMatchObject({ name: "ollama", format: "openai-chat" });
    server.respond({ chunks: [STOP_CHUNK] });
    for await (const _ of provider.stream(REQUEST)) {
      // drain
    }
    const request = server.requests.at(-1)!;
    expect(request.url).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe(`Bearer ${NO_KEY_PLACEHOLDER}`);
    expect(request.headers["x-spool"]).toBe("1");
    expect(JSON.parse(request.body)).toEqual(
      JSON.parse(JSON.stringify(toChatRequest(REQUEST, "ollama"))),
    );
  });

  it("the Responses provider posts the mapped body to /responses with the key", async () => {
    const provider = createOpenAIResponsesProvider({
      apiKey: "sk-test-key-0000000000000000",
      baseURL: `${server.url}/v1`,
    });
    expect(provider).toMatchObject({ name: "openai-responses", format: "openai-responses" });
    const events = [
      { type: "response.created", response: { id: "resp_1", model: "m" } },
      { type: "response.completed", response: { id: "resp_1", status: "completed", output: [] } },
    ];
    server.respond({
      chunks: events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`),
    });
    const parts = [];
    for await (const part of provider.stream(REQUEST)) parts.push(part);
    expect(parts.map((part) => part.type)).toEqual(["start", "stop"]);
    const request = server.requests.at(-1)!;
    expect(request.url).toBe("/v1/responses");
    expect(request.headers.authorization).toBe("Bearer sk-test-key-0000000000000000");
    expect(JSON.parse(request.body)).toEqual(
      JSON.parse(JSON.stringify(toResponsesRequest(REQUEST))),
    );
  });
});
