import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../src/providers/anthropic/index.js";
import {
  type AssembledMessage,
  assembleMessage,
  type Provider,
  type StreamPart,
} from "../src/providers/index.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

// Hand-built Anthropic streams for what no fixture covers: redacted thinking, the other stop
// reasons, unknown events and deltas, errors mid-stream, malformed streams. Every stream goes
// through the real SDK over loopback HTTP.

let server: ReplayServer;
let provider: Provider;

beforeAll(async () => {
  server = await startReplayServer();
  provider = createAnthropicProvider({
    apiKey: "sk-ant-test-cases-key-0000000000000",
    baseURL: server.url,
    transport: { maxAttempts: 1 },
  });
});

afterAll(async () => {
  await server.close();
});

interface Decoded {
  parts: StreamPart[];
  message: AssembledMessage;
}

async function decode(body: string | Uint8Array): Promise<Decoded> {
  server.respond({ chunks: [body] });
  const parts: StreamPart[] = [];
  for await (const part of provider.stream({
    model: "claude-sonnet-5",
    messages: [{ role: "user", content: "Hi" }],
  })) {
    parts.push(part);
  }
  return { parts, message: assembleMessage("anthropic", parts) };
}

/** Frames events as Anthropic does: `event: <type>` and one `data:` line each. */
function sse(...events: Record<string, unknown>[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
}

function messageStart(id = "msg_case", usage: Record<string, unknown> = {}) {
  return {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1, ...usage },
    },
  };
}

function textBlock(index: number, ...texts: string[]) {
  return [
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ...texts.map((text) => ({
      type: "content_block_delta",
      index,
      delta: { type: "text_delta", text },
    })),
    { type: "content_block_stop", index },
  ];
}

function finish(stopReason: string | null, outputTokens = 5) {
  return [
    {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    },
    { type: "message_stop" },
  ];
}

function lastError(parts: StreamPart[]) {
  const last = parts.at(-1);
  if (last?.type !== "error") throw new Error(`expected an error part, got ${last?.type}`);
  return last.error;
}

describe("hand-built Anthropic streams for what no fixture covers", () => {
  it("redacted thinking is kept as redacted-reasoning, next to signed thinking", async () => {
    const { message } = await decode(
      sse(
        messageStart(),
        {
          type: "content_block_start",
          index: 0,
          content_block: { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
        },
        { type: "content_block_stop", index: 0 },
        {
          type: "content_block_start",
          index: 1,
          content_block: { type: "thinking", thinking: "", signature: "" },
        },
        {
          type: "content_block_delta",
          index: 1,
          delta: { type: "thinking_delta", thinking: "Let me see." },
        },
        {
          type: "content_block_delta",
          index: 1,
          delta: { type: "signature_delta", signature: "c2ln" },
        },
        { type: "content_block_stop", index: 1 },
        ...textBlock(2, "Done."),
        ...finish("end_turn"),
      ),
    );
    expect(message.content).toEqual([
      { type: "redacted-reasoning", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
      { type: "reasoning", text: "Let me see.", signature: "c2ln" },
      { type: "text", text: "Done." },
    ]);
  });

  for (const [word, reason] of [
    ["stop_sequence", "stop-sequence"],
    ["pause_turn", "pause"],
    ["model_context_window_exceeded", "max-tokens"],
    ["a_reason_from_the_future", "other"],
  ] as const) {
    it(`stop_reason ${word} → ${reason}`, async () => {
      const { message } = await decode(sse(messageStart(), ...textBlock(0, "x"), ...finish(word)));
      expect(message.stopReason).toBe(reason);
      expect(message.providerStopReason).toBe(word);
    });
  }

  it("no stop_reason at all → other, with no provider word", async () => {
    const { message } = await decode(sse(messageStart(), { type: "message_stop" }));
    expect(message.stopReason).toBe("other");
    expect(message.providerStopReason).toBeNull();
  });

  it("unknown event and delta types are skipped; unknown block types keep their deltas", async () => {
    const { parts, message } = await decode(
      sse(
        messageStart(),
        {
          type: "content_block_start",
          index: 0,
          content_block: { type: "text", text: "Hel", citations: [] },
        },
        { type: "content_block_delta", index: 0, delta: { type: "sparkle_delta", sparkle: 3 } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } },
        {
          type: "content_block_delta",
          index: 0,
          delta: { type: "citations_delta", citation: { type: "char_location", cited_text: "x" } },
        },
        { type: "content_block_stop", index: 0 },
        { type: "message_annotation", note: "from a newer API" },
        {
          type: "content_block_start",
          index: 1,
          content_block: { type: "widget", content: null, size: 1 },
        },
        { type: "content_block_delta", index: 1, delta: { type: "widget_delta", content: "ab" } },
        {
          type: "content_block_delta",
          index: 1,
          delta: { type: "widget_delta", content: "cd", size: 2 },
        },
        { type: "content_block_stop", index: 1 },
        ...finish("end_turn"),
      ),
    );
    expect(parts.filter((part) => part.type === "error")).toEqual([]);
    expect(message.content).toEqual([
      { type: "text", text: "Hello" },
      { type: "provider", kind: "widget", data: { type: "widget", content: "abcd", size: 2 } },
    ]);
  });

  it("an error event mid-stream ends with its error, keeping the text so far", async () => {
    const { parts, message } = await decode(
      `${sse(messageStart(), { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Partial" } })}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
    );
    const error = lastError(parts);
    expect(error.code).toBe("provider.overloaded");
    expect(error.providerType).toBe("overloaded_error");
    expect(message.content).toEqual([{ type: "text", text: "Partial" }]);
    expect(message.stopReason).toBe("error");
  });

  it("content before message_start is provider.bad-stream", async () => {
    const { parts } = await decode(sse(...textBlock(0, "x"), ...finish("end_turn")));
    expect(lastError(parts).code).toBe("provider.bad-stream");
    expect(parts.some((part) => part.type === "start")).toBe(false);
  });

  it("a data line that is not JSON is provider.bad-stream", async () => {
    const { parts } = await decode(
      `${sse(messageStart())}event: content_block_start\ndata: {"type":"content_block_start",\n\n`,
    );
    expect(lastError(parts).code).toBe("provider.bad-stream");
  });

  it("a stream that ends without message_stop is a connection error", async () => {
    const { parts, message } = await decode(sse(messageStart(), ...textBlock(0, "cut")));
    expect(lastError(parts).code).toBe("provider.connection");
    expect(message.content).toEqual([{ type: "text", text: "cut" }]);
  });

  it("cached tokens that arrive only in message_delta update inputTokens", async () => {
    const { parts, message } = await decode(
      sse(
        messageStart("msg_usage", { input_tokens: 5 }),
        ...textBlock(0, "x"),
        {
          type: "message_delta",
          delta: { stop_reason: "end_turn", stop_sequence: null },
          usage: { output_tokens: 9, cache_read_input_tokens: 100, input_tokens: null },
        },
        { type: "message_stop" },
      ),
    );
    expect(parts.find((part) => part.type === "usage")).toEqual({
      type: "usage",
      usage: { inputTokens: 105, cacheReadTokens: 100, cacheWriteTokens: 0, outputTokens: 9 },
    });
    expect(message.usage).toEqual({
      inputTokens: 105,
      outputTokens: 9,
      cacheReadTokens: 100,
      cacheWriteTokens: 0,
    });
  });
});
