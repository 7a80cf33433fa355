import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../src/providers/anthropic/index.js";
import { assembleMessage, messageText, type StreamPart } from "../src/providers/index.js";
import { createOpenAIChatProvider } from "../src/providers/openai/index.js";
import { anthropicTextFrames, OVERLOADED_FRAME } from "./support/anthropic-sse.js";
import { collect } from "./support/events.js";
import {
  chunkBytes,
  fixtureBytes,
  type ReplayServer,
  startReplayServer,
} from "./support/replay-server.js";

const KEY = "sk-ant-api03-transport-test-secret-0123456789";
let server: ReplayServer;
const sleeps: number[] = [];
const transport = {
  random: () => 0,
  sleep: async (ms: number) => {
    sleeps.push(ms);
  },
};

beforeAll(async () => {
  server = await startReplayServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  sleeps.length = 0;
  server.requests.length = 0;
});

const anthropic = (options: Record<string, unknown> = {}) =>
  createAnthropicProvider({
    apiKey: KEY,
    baseURL: server.url,
    transport: { ...transport, ...options },
  });
const ask = { model: "claude-sonnet-4-5", messages: [{ role: "user" as const, content: "hi" }] };

function textOf(parts: StreamPart[]): string {
  return messageText(assembleMessage("anthropic", parts));
}

describe("provider transport over a loopback server", () => {
  it("reads \\r\\n line endings like \\n", async () => {
    const body = fixtureBytes("anthropic/anthropic-json-tool.1.sse").toString("utf8");
    server.respond({ chunks: [body] }, { chunks: [body.replace(/\n/g, "\r\n")] });
    const plain = assembleMessage("anthropic", await collect(anthropic().stream(ask)));
    const crlf = assembleMessage("anthropic", await collect(anthropic().stream(ask)));
    expect(crlf).toEqual(plain);
    expect(crlf.content[0]).toMatchObject({ type: "tool-call", name: "json" });
  });

  it("ignores SSE comments, keep-alives and id:/retry: fields", async () => {
    const frames = anthropicTextFrames(["Hel", "lo"]);
    const noisy = [
      ": connected\n\n",
      "retry: 3000\n\n",
      ...frames.flatMap((text, index) => [`: keep-alive ${index}\n\n`, `id: ${index}\n${text}`]),
    ];
    server.respond({ chunks: noisy });
    const parts = await collect(anthropic().stream(ask));
    expect(parts.at(-1)?.type).toBe("stop");
    expect(textOf(parts)).toBe("Hello");
  });

  it("joins a UTF-8 character split across network chunks", async () => {
    const body = Buffer.from(anthropicTextFrames(["héllo ", "😀 wörld"]).join(""), "utf8");
    const emoji = body.indexOf(Buffer.from("😀", "utf8"));
    server.respond({ chunks: [body.subarray(0, emoji + 2), body.subarray(emoji + 2)] });
    expect(textOf(await collect(anthropic().stream(ask)))).toBe("héllo 😀 wörld");
    server.respond({ chunks: chunkBytes(body, 1) });
    expect(textOf(await collect(anthropic().stream(ask)))).toBe("héllo 😀 wörld");
  });

  it("ends with a retryable overloaded error part after output began, keeping the output", async () => {
    const frames = anthropicTextFrames(["partial ", "answer"]);
    server.respond({ chunks: [...frames.slice(0, 4), OVERLOADED_FRAME] });
    const parts = await collect(anthropic().stream(ask));
    const last = parts.at(-1);
    expect(last).toMatchObject({
      type: "error",
      error: { code: "provider.overloaded", retryable: true },
    });
    expect(parts.some((part) => part.type === "retry")).toBe(false);
    expect(textOf(parts)).toBe("partial answer");
    expect(server.requests).toHaveLength(1);
  });

  it("retries an HTTP error before the stream, honouring retry-after", async () => {
    const overloaded = JSON.stringify({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
    server.respond(
      {
        status: 529,
        headers: { "content-type": "application/json", "retry-after": "7" },
        chunks: [overloaded],
      },
      {
        status: 500,
        headers: { "content-type": "application/json" },
        chunks: ['{"type":"error","error":{"type":"api_error","message":"boom"}}'],
      },
      { chunks: anthropicTextFrames(["fine"]) },
    );
    const parts = await collect(anthropic().stream(ask));
    const retries = parts.filter((part) => part.type === "retry");
    expect(retries.map((part) => part.error.code)).toEqual([
      "provider.overloaded",
      "provider.server-error",
    ]);
    expect(retries[0]).toMatchObject({ delayMs: 7000, error: { status: 529, retryAfterMs: 7000 } });
    expect(sleeps).toEqual([7000, 2000]);
    expect(textOf(parts)).toBe("fine");
    expect(server.requests).toHaveLength(3);
  });

  it("does not retry a bad request, and never shows the key", async () => {
    server.respond({
      status: 401,
      headers: { "content-type": "application/json" },
      chunks: [
        JSON.stringify({
          type: "error",
          error: { type: "authentication_error", message: `invalid x-api-key ${KEY}` },
        }),
      ],
    });
    const parts = await collect(anthropic().stream(ask));
    expect(parts).toHaveLength(1);
    const error = parts[0]!;
    expect(error).toMatchObject({
      type: "error",
      error: { code: "provider.auth", status: 401, retryable: false },
    });
    expect(JSON.stringify(parts)).not.toContain(KEY);
    expect(
      server.requests[0]!.headers.authorization ?? server.requests[0]!.headers["x-api-key"],
    ).toContain(KEY);
  });

  it("gives up after the configured attempts", async () => {
    server.respond({
      status: 503,
      headers: { "content-type": "application/json" },
      chunks: ["{}"],
    });
    const parts = await collect(anthropic({ maxAttempts: 3 }).stream(ask));
    expect(parts.map((part) => part.type)).toEqual(["retry", "retry", "error"]);
    expect(parts.at(-1)).toMatchObject({ error: { code: "provider.server-error", status: 503 } });
  });

  it("reports a connection cut mid-stream as a connection error with the partial output", async () => {
    const frames = anthropicTextFrames(["cut ", "here"]);
    server.respond({ chunks: frames.slice(0, 3), after: "cut" });
    const parts = await collect(anthropic().stream(ask));
    expect(parts.at(-1)).toMatchObject({
      type: "error",
      error: { code: "provider.connection", retryable: true },
    });
    expect(textOf(parts)).toBe("cut ");
  });

  it("ends a stalled stream with an idle timeout and closes the request", async () => {
    const frames = anthropicTextFrames(["slow"]);
    server.respond({ chunks: frames.slice(0, 3), after: "stall" });
    const parts = await collect(anthropic({ idleTimeoutMs: 50, maxAttempts: 1 }).stream(ask));
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { code: "provider.idle-timeout" } });
    await server.closed();
  });

  it("closes the HTTP request when the caller aborts", async () => {
    const controller = new AbortController();
    const frames = anthropicTextFrames(["a", "b", "c"]);
    server.respond({ chunks: frames.slice(0, 3), after: "stall" });
    const parts: StreamPart[] = [];
    for await (const part of anthropic().stream(ask, { signal: controller.signal })) {
      parts.push(part);
      if (part.type === "text") controller.abort();
    }
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { code: "provider.cancelled" } });
    await server.closed();
  });

  it("reads a refused connection as a connection error, final once the attempts are spent", async () => {
    const provider = createAnthropicProvider({
      apiKey: KEY,
      baseURL: "http://127.0.0.1:9",
      transport: { ...transport, maxAttempts: 2 },
    });
    const parts = await collect(provider.stream(ask));
    expect(parts.map((part) => part.type)).toEqual(["retry", "error"]);
    expect(parts[0]).toMatchObject({ error: { code: "provider.connection", retryable: true } });
    expect(parts.at(-1)).toMatchObject({
      error: { code: "provider.connection", retryable: false },
    });
  });

  it("honours retry-after-ms on OpenAI-compatible servers and reads an error chunk mid-stream", async () => {
    const chunk = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
    server.respond(
      {
        status: 429,
        headers: { "content-type": "application/json", "retry-after-ms": "1500" },
        chunks: ['{"error":{"message":"slow down","type":"rate_limit_exceeded"}}'],
      },
      {
        chunks: [
          chunk({
            id: "chatcmpl-1",
            object: "chat.completion.chunk",
            created: 1,
            model: "gpt-4o",
            choices: [
              { index: 0, delta: { role: "assistant", content: "half" }, finish_reason: null },
            ],
          }),
          chunk({ error: { message: "The server had an error", type: "server_error" } }),
        ],
      },
    );
    const provider = createOpenAIChatProvider({
      apiKey: "sk-test-openai-key-0123456789abcdef",
      baseURL: server.url,
      transport,
    });
    const parts = await collect(
      provider.stream({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(parts[0]).toMatchObject({
      type: "retry",
      delayMs: 1500,
      error: { code: "provider.rate-limited" },
    });
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { code: "provider.server-error" } });
    expect(messageText(assembleMessage("openai-chat", parts))).toBe("half");
  });
});
