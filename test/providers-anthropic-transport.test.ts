import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AnthropicProviderOptions,
  createAnthropicProvider,
} from "../src/providers/anthropic/index.js";
import {
  assembleMessage,
  ProviderError,
  type ProviderRequest,
  type StreamPart,
} from "../src/providers/index.js";
import { fixtureBytes, type ReplayServer, startReplayServer } from "./support/replay-server.js";

// The Anthropic provider over HTTP: what it sends, and how failures before and after the first
// byte, cancellation and silence end its stream.

const KEY = "sk-ant-api03-transport-test-key-abcdefghijklmnop";
const TEXT = fixtureBytes("anthropic/anthropic-text.sse");
const REQUEST: ProviderRequest = {
  model: "claude-sonnet-5",
  system: "Be brief.",
  messages: [{ role: "user", content: "Hello" }],
  maxOutputTokens: 256,
};

let server: ReplayServer;

beforeAll(async () => {
  server = await startReplayServer();
});

afterAll(async () => {
  await server.close();
});

function anthropic(options: Partial<AnthropicProviderOptions> = {}) {
  return createAnthropicProvider({
    apiKey: KEY,
    baseURL: server.url,
    ...options,
    transport: { sleep: async () => {}, random: () => 0, ...options.transport },
  });
}

async function collect(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

function lastError(parts: StreamPart[]) {
  const last = parts.at(-1);
  if (last?.type !== "error") throw new Error(`expected an error part, got ${last?.type}`);
  return last.error;
}

const errorBody = (type: string, message: string) =>
  JSON.stringify({ type: "error", error: { type, message } });

describe("the Anthropic provider over HTTP", () => {
  it("posts the mapped request with stream: true, the key and the extra headers", async () => {
    server.respond({ chunks: [TEXT] });
    const before = server.requests.length;
    const parts = await collect(anthropic({ headers: { "x-gateway": "spool" } }).stream(REQUEST));
    expect(parts.at(-1)?.type).toBe("stop");
    const request = server.requests[before];
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/v1/messages");
    // SDK 1.12 sends the key as a bearer token (earlier versions used `x-api-key`).
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.headers["x-gateway"]).toBe("spool");
    expect(request?.headers["anthropic-version"]).toEqual(expect.any(String));
    expect(JSON.parse(request?.body ?? "")).toEqual({
      model: "claude-sonnet-5",
      max_tokens: 256,
      system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
      stream: true,
    });
  });

  it("uses the injected fetch, and the provider's name and default max_tokens", async () => {
    server.respond({ chunks: [TEXT] });
    const urls: string[] = [];
    const before = server.requests.length;
    const provider = anthropic({
      name: "claude-gateway",
      defaultMaxOutputTokens: 1234,
      fetch: (input, init) => {
        urls.push(String(input instanceof Request ? input.url : input));
        return fetch(input, init);
      },
    });
    expect(provider.name).toBe("claude-gateway");
    expect(provider.format).toBe("anthropic");
    await collect(provider.stream({ ...REQUEST, maxOutputTokens: undefined }));
    expect(urls).toEqual([`${server.url}/v1/messages`]);
    expect(JSON.parse(server.requests[before]?.body ?? "").max_tokens).toBe(1234);
  });

  it("raw: true adds the SDK's events as raw parts", async () => {
    server.respond({ chunks: [TEXT] });
    const parts = await collect(anthropic().stream(REQUEST, { raw: true }));
    const raw = parts.filter((part) => part.type === "raw");
    expect(raw[0]).toMatchObject({ type: "raw", event: { type: "message_start" } });
    expect(raw.at(-1)).toMatchObject({ type: "raw", event: { type: "message_stop" } });
    expect(parts.at(-1)?.type).toBe("stop");
  });

  it("a 400 is provider.bad-request, not retried", async () => {
    server.respond({
      status: 400,
      headers: { "content-type": "application/json", "request-id": "req_400" },
      chunks: [errorBody("invalid_request_error", "max_tokens: must be at least 1")],
    });
    const before = server.requests.length;
    const parts = await collect(anthropic().stream(REQUEST));
    expect(parts).toHaveLength(1);
    expect(lastError(parts)).toMatchObject({
      code: "provider.bad-request",
      status: 400,
      providerType: "invalid_request_error",
      requestId: "req_400",
      retryable: false,
    });
    expect(server.requests.length - before).toBe(1);
  });

  it("a 401 that echoes the key is provider.auth, and the key never shows", async () => {
    server.respond({
      status: 401,
      headers: { "content-type": "application/json" },
      chunks: [errorBody("authentication_error", `invalid x-api-key ${KEY}`)],
    });
    const error = lastError(await collect(anthropic().stream(REQUEST)));
    expect(error.code).toBe("provider.auth");
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain("[redacted]");
  });

  it("a 529 before the first byte is retried after retry-after, then the stream goes on", async () => {
    server.respond(
      {
        status: 529,
        headers: { "content-type": "application/json", "retry-after": "3" },
        chunks: [errorBody("overloaded_error", "Overloaded")],
      },
      { chunks: [TEXT] },
    );
    const parts = await collect(anthropic().stream(REQUEST));
    expect(parts[0]).toMatchObject({
      type: "retry",
      attempt: 1,
      delayMs: 3000,
      error: { code: "provider.overloaded", retryable: true },
    });
    expect(parts[1]?.type).toBe("start");
    expect(parts.at(-1)?.type).toBe("stop");
    expect(assembleMessage("anthropic", parts).stopReason).toBe("end");
  });

  it("a refused connection is provider.connection, retried up to maxAttempts, then final", async () => {
    const closed = await startReplayServer();
    const url = closed.url;
    await closed.close();
    const parts = await collect(
      anthropic({ baseURL: url, transport: { maxAttempts: 2 } }).stream(REQUEST),
    );
    expect(parts.map((part) => part.type)).toEqual(["retry", "error"]);
    // The attempts are spent: nothing above the transport may send it again.
    expect(lastError(parts)).toMatchObject({ code: "provider.connection", retryable: false });
  });

  it("aborting mid-stream closes the request and ends with provider.cancelled", async () => {
    const bytes = TEXT.toString("utf8");
    const head = bytes.slice(0, bytes.indexOf("event: content_block_stop"));
    server.respond({ chunks: [head], after: "stall" });
    const controller = new AbortController();
    const parts: StreamPart[] = [];
    for await (const part of anthropic().stream(REQUEST, { signal: controller.signal })) {
      parts.push(part);
      if (part.type === "text" && part.text !== "") controller.abort();
    }
    expect(lastError(parts)).toMatchObject({ code: "provider.cancelled", retryable: false });
    await server.closed();
    const message = assembleMessage("anthropic", parts);
    expect(message.stopReason).toBe("cancelled");
    expect(message.content[0]?.type).toBe("text");
  });

  it("a call aborted before it starts sends nothing and ends with provider.cancelled", async () => {
    const before = server.requests.length;
    const parts = await collect(
      anthropic().stream(REQUEST, { signal: AbortSignal.abort(new Error("stop")) }),
    );
    expect(parts.map((part) => part.type)).toEqual(["error"]);
    expect(lastError(parts).code).toBe("provider.cancelled");
    expect(server.requests.length).toBe(before);
  });

  it("a stream that goes silent after it began ends with provider.idle-timeout", async () => {
    const bytes = TEXT.toString("utf8");
    const head = bytes.slice(0, bytes.indexOf("event: content_block_start"));
    server.respond({ chunks: [head], after: "stall" });
    const parts = await collect(anthropic({ transport: { idleTimeoutMs: 50 } }).stream(REQUEST));
    expect(parts[0]?.type).toBe("start");
    expect(lastError(parts)).toMatchObject({ code: "provider.idle-timeout", retryable: true });
    await server.closed();
  });

  it("no API key is a provider.no-key error at creation", () => {
    expect(() => createAnthropicProvider({ apiKey: " " })).toThrow(ProviderError);
    try {
      createAnthropicProvider({ apiKey: "" });
    } catch (error) {
      expect((error as ProviderError).info.code).toBe("provider.no-key");
    }
  });
});
