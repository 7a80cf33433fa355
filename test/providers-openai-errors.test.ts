import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assembleMessage,
  ProviderError,
  type ProviderRequest,
  type StreamPart,
} from "../src/providers/index.js";
import {
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
} from "../src/providers/openai/index.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

// Failures of the OpenAI providers end the stream with the right error part: cursor expiry,
// in-band errors, cut and cancelled streams, refused keys.

const KEY = "sk-test-secret-key-1234567890abcdef";
const JSON_HEADERS = { "content-type": "application/json" };
const noSleep = async () => {};

let server: ReplayServer;

beforeAll(async () => {
  server = await startReplayServer();
});

afterAll(async () => {
  await server.close();
});

async function collect(
  stream: AsyncIterable<StreamPart>,
  onPart?: (part: StreamPart) => void,
): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) {
    parts.push(part);
    onPart?.(part);
  }
  return parts;
}

function responses() {
  return createOpenAIResponsesProvider({
    apiKey: KEY,
    baseURL: `${server.url}/v1`,
    transport: { sleep: noSleep },
  });
}

function chat() {
  return createOpenAIChatProvider({
    apiKey: KEY,
    baseURL: `${server.url}/v1`,
    transport: { sleep: noSleep },
  });
}

const REQUEST: ProviderRequest = { model: "gpt-test", messages: [{ role: "user", content: "Hi" }] };

const NOT_FOUND = JSON.stringify({
  error: {
    message: "Previous response with id 'resp_x' not found.",
    type: "invalid_request_error",
    param: "previous_response_id",
    code: "previous_response_not_found",
  },
});

function sse(events: object[]): string {
  return events
    .map(
      (event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`,
    )
    .join("");
}

describe("cursor expiry", () => {
  it.each([400, 404])(
    "a %i previous_response_not_found ends with provider.cursor-expired, not retried",
    async (status) => {
      const before = server.requests.length;
      server.respond({ status, headers: JSON_HEADERS, chunks: [NOT_FOUND] });
      const parts = await collect(responses().stream({ ...REQUEST, previousResponseId: "resp_x" }));
      expect(parts).toEqual([
        {
          type: "error",
          error: expect.objectContaining({
            code: "provider.cursor-expired",
            retryable: false,
            status,
          }),
        },
      ]);
      expect(server.requests.length - before).toBe(1);
      expect(JSON.parse(server.requests.at(-1)!.body)).toMatchObject({
        previous_response_id: "resp_x",
      });
    },
  );

  it("a response.failed with previous_response_not_found in the stream is a cursor expiry too", async () => {
    server.respond({
      chunks: [
        sse([
          { type: "response.created", response: { id: "resp_1", model: "gpt-test" } },
          {
            type: "response.failed",
            response: {
              id: "resp_1",
              status: "failed",
              error: {
                code: "previous_response_not_found",
                message: "Previous response not found",
              },
            },
          },
        ]),
      ],
    });
    const parts = await collect(responses().stream({ ...REQUEST, previousResponseId: "resp_0" }));
    expect(parts.at(-1)).toMatchObject({
      type: "error",
      error: { code: "provider.cursor-expired", retryable: false },
    });
  });
});

describe("in-band failures", () => {
  it("a response.failed with server_error ends with provider.server-error and keeps the text", async () => {
    server.respond({
      chunks: [
        sse([
          { type: "response.created", response: { id: "resp_2", model: "gpt-test" } },
          { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "Par" },
          {
            type: "response.failed",
            response: { id: "resp_2", error: { code: "server_error", message: "boom" } },
          },
        ]),
      ],
    });
    const parts = await collect(responses().stream(REQUEST));
    const message = assembleMessage("openai-responses", parts);
    expect(message.content).toEqual([{ type: "text", text: "Par" }]);
    expect(message.error).toMatchObject({ code: "provider.server-error", retryable: true });
  });

  it("a flat error event with rate_limit_exceeded ends with provider.rate-limited", async () => {
    server.respond({
      chunks: [
        sse([
          { type: "response.created", response: { id: "resp_3", model: "gpt-test" } },
          { type: "error", code: "rate_limit_exceeded", message: "slow down", param: null },
        ]),
      ],
    });
    const parts = await collect(responses().stream(REQUEST));
    expect(parts.at(-1)).toMatchObject({
      type: "error",
      error: { code: "provider.rate-limited" },
    });
  });

  it("a chat chunk carrying error mid-stream ends with that error after the text", async () => {
    const chunk = (delta: object) =>
      `data: ${JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta }] })}\n\n`;
    server.respond({
      chunks: [
        chunk({ content: "Hel" }),
        `data: ${JSON.stringify({ error: { message: "The server had an error", type: "server_error" } })}\n\n`,
      ],
    });
    const parts = await collect(chat().stream(REQUEST));
    const message = assembleMessage("openai-chat", parts);
    expect(message.content).toEqual([{ type: "text", text: "Hel" }]);
    expect(message.error).toMatchObject({ code: "provider.server-error" });
    expect(parts.filter((part) => part.type === "retry")).toEqual([]);
  });

  it("a chat stream that closes before any finish_reason ends with provider.connection", async () => {
    server.respond({
      chunks: [
        `data: ${JSON.stringify({ id: "c2", model: "m", choices: [{ index: 0, delta: { content: "Hi" } }] })}\n\n`,
      ],
    });
    const parts = await collect(chat().stream(REQUEST));
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { code: "provider.connection" } });
  });
});

describe("cancellation and keys", () => {
  it("aborting mid-stream ends with provider.cancelled, not a stop", async () => {
    server.respond({
      chunks: [
        `data: ${JSON.stringify({ id: "c3", model: "m", choices: [{ index: 0, delta: { content: "Hi" } }] })}\n\n`,
      ],
      after: "stall",
    });
    const controller = new AbortController();
    const parts = await collect(chat().stream(REQUEST, { signal: controller.signal }), (part) => {
      if (part.type === "text") controller.abort();
    });
    expect(parts.map((part) => part.type)).toEqual(["start", "text", "error"]);
    expect(parts.at(-1)).toMatchObject({ error: { code: "provider.cancelled" } });
    await server.closed();
  });

  it("a refused key is provider.auth and the key never shows in the message", async () => {
    server.respond({
      status: 401,
      headers: JSON_HEADERS,
      chunks: [
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${KEY}.`,
            type: "invalid_request_error",
            code: "invalid_api_key",
          },
        }),
      ],
    });
    const parts = await collect(chat().stream(REQUEST));
    expect(parts).toHaveLength(1);
    const error = parts[0]?.type === "error" ? parts[0].error : undefined;
    expect(error?.code).toBe("provider.auth");
    expect(error?.message).not.toContain(KEY);
    expect(error?.message).toContain("[redacted]");
  });

  it("a 429 insufficient_quota is an account problem (provider.auth), not retried", async () => {
    const before = server.requests.length;
    server.respond({
      status: 429,
      headers: JSON_HEADERS,
      chunks: [
        JSON.stringify({
          error: {
            message: "You exceeded your current quota",
            type: "insufficient_quota",
            code: "insufficient_quota",
          },
        }),
      ],
    });
    const parts = await collect(responses().stream(REQUEST));
    expect(parts).toEqual([
      { type: "error", error: expect.objectContaining({ code: "provider.auth", status: 429 }) },
    ]);
    expect(server.requests.length - before).toBe(1);
  });

  it("a hosted flavour without a key throws provider.no-key naming its variable", () => {
    expect(() => createOpenAIChatProvider({ flavour: "groq", env: {} })).toThrow(ProviderError);
    expect(() => createOpenAIChatProvider({ flavour: "groq", env: {} })).toThrow(/GROQ_API_KEY/);
    expect(() => createOpenAIResponsesProvider({ env: {} })).toThrow(/OPENAI_API_KEY/);
  });

  it("a compatible server without a base URL is refused with the option to set", () => {
    expect(() => createOpenAIChatProvider({ flavour: "compatible", env: {} })).toThrow(/baseURL/);
  });
});
