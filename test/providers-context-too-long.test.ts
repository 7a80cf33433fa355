/**
 * A provider's answer that the request is longer than the model's context window is classified
 * as `provider.context-too-long` (not a generic bad request), through the real SDKs reading each
 * server's error shape from a loopback server: OpenAI, Anthropic, vLLM, llama.cpp, Ollama, Groq.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  classifyProviderError,
  createAnthropicProvider,
  createOpenAIChatProvider,
  isContextTooLong,
  type Provider,
  type StreamPart,
} from "../src/providers/index.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

let server: ReplayServer;
beforeAll(async () => {
  server = await startReplayServer();
});
afterAll(async () => {
  await server.close();
});

const KEY = "sk-test-context-key-0123456789abcdef";

async function failure(provider: Provider, status: number, body: unknown) {
  server.respond({
    status,
    headers: { "content-type": "application/json" },
    chunks: [JSON.stringify(body)],
  });
  const parts: StreamPart[] = [];
  for await (const part of provider.stream({
    model: "m",
    messages: [{ role: "user", content: "a very long prompt" }],
    maxOutputTokens: 64,
  })) {
    parts.push(part);
  }
  const last = parts.at(-1);
  if (last?.type !== "error") throw new Error(`expected an error part, got ${last?.type}`);
  return last.error;
}

const chat = (flavour: "openai" | "vllm" | "llamacpp" | "ollama" | "groq") =>
  createOpenAIChatProvider({
    apiKey: KEY,
    baseURL: `${server.url}/v1`,
    flavour,
    env: {},
    transport: { maxAttempts: 1 },
  });

describe("context too long", () => {
  it.each([
    [
      "OpenAI",
      "openai",
      {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      },
    ],
    [
      "vLLM",
      "vllm",
      {
        object: "error",
        message:
          "This model's maximum context length is 8192 tokens. However, you requested 9321 tokens (8297 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.",
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    ],
    [
      "llama.cpp",
      "llamacpp",
      {
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: 5012,
          n_ctx: 4096,
        },
      },
    ],
    [
      "Ollama",
      "ollama",
      { error: { message: "input length exceeds the context length", type: "api_error" } },
    ],
    [
      "Groq",
      "groq",
      {
        error: {
          message: "Please reduce the length of the messages or completion.",
          type: "invalid_request_error",
          code: "context_length_exceeded",
        },
      },
    ],
  ] as const)(
    "%s: a 400 saying so is provider.context-too-long, not retried",
    async (_name, flavour, body) => {
      const error = await failure(chat(flavour), 400, body);
      expect(error).toMatchObject({ code: "provider.context-too-long", retryable: false });
      expect(error.message).toContain("hands the thread off");
      expect(error.message).not.toContain(KEY);
    },
  );

  it("Anthropic: 'prompt is too long' is provider.context-too-long", async () => {
    const provider = createAnthropicProvider({
      apiKey: KEY,
      baseURL: server.url,
      transport: { maxAttempts: 1 },
    });
    const error = await failure(provider, 400, {
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "prompt is too long: 208310 tokens > 200000 maximum",
      },
    });
    expect(error).toMatchObject({ code: "provider.context-too-long", status: 400 });
  });

  it("other bad requests stay provider.bad-request", async () => {
    const error = await failure(chat("openai"), 400, {
      error: {
        message: "Invalid value for 'temperature'",
        type: "invalid_request_error",
        code: null,
      },
    });
    expect(error.code).toBe("provider.bad-request");
  });

  it("recognises the messages of other servers and the error types alone", () => {
    expect(
      isContextTooLong(
        undefined,
        "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000",
      ),
    ).toBe(true);
    expect(
      isContextTooLong(
        undefined,
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
      ),
    ).toBe(true);
    expect(isContextTooLong("context_length_exceeded", "")).toBe(true);
    expect(isContextTooLong(undefined, "model not found")).toBe(false);
    expect(
      classifyProviderError(
        {
          status: 400,
          error: {
            type: "error",
            error: {
              type: "invalid_request_error",
              message: "prompt is too long: 9 tokens > 8 maximum",
            },
          },
        },
        { provider: "anthropic" },
      ).code,
    ).toBe("provider.context-too-long");
  });
});
