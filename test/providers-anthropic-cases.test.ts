import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../src/providers/anthropic/index.js";
import {
  type AssembledMessage,
  assembleMessage,
  type ContentBlock,
  type Provider,
  type StreamPart,
} from "../src/providers/index.js";
import {
  fixtureBytes,
  PROVIDER_FIXTURES,
  type ReplayServer,
  startReplayServer,
} from "./support/replay-server.js";

// The edge case each synthetic Anthropic fixture exercises, and the notable recorded ones, served
// through the real SDK over loopback HTTP. Streams no fixture covers are in
// providers-anthropic-hand-built.test.ts.

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

async function decode(body: Uint8Array): Promise<Decoded> {
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

const decodeFixture = (path: string) => decode(fixtureBytes(`anthropic/${path}`));

/** Frames events as Anthropic does: `event: <type>` and one `data:` line each. */
function lastError(parts: StreamPart[]) {
  const last = parts.at(-1);
  if (last?.type !== "error") throw new Error(`expected an error part, got ${last?.type}`);
  return last.error;
}

function providerBlock(block: ContentBlock | undefined) {
  expect(block?.type).toBe("provider");
  return block as Extract<ContentBlock, { type: "provider" }>;
}

type Case = (decoded: Decoded) => void;

const SYNTHETIC: Record<string, { title: string; check: Case }> = {
  "anthropic-advisor-stop-reasons.sse": {
    title: "advisor results (plaintext cut by max_tokens, and redacted) are kept whole",
    check: ({ message }) => {
      expect(message.content.map((block) => block.type)).toEqual([
        "tool-call",
        "provider",
        "tool-call",
        "provider",
      ]);
      expect(message.content[0]).toEqual({
        type: "tool-call",
        id: "srvtoolu_advisor_plaintext",
        name: "advisor",
        inputText: "",
        input: {},
        server: true,
      });
      expect(providerBlock(message.content[1]).data).toEqual({
        type: "advisor_tool_result",
        tool_use_id: "srvtoolu_advisor_plaintext",
        content: {
          type: "advisor_result",
          text: "Partial plaintext advice.",
          stop_reason: "max_tokens",
        },
      });
      expect(providerBlock(message.content[3]).data).toMatchObject({
        content: { type: "advisor_redacted_result", encrypted_content: "opaque-encrypted-advice" },
      });
      // The advisor's own max_tokens is not the message's.
      expect(message.stopReason).toBe("end");
    },
  },
  "anthropic-fallback.sse": {
    title:
      "a fallback block (another model took over) is a provider block; input from message_delta",
    check: ({ message }) => {
      expect(providerBlock(message.content[0])).toEqual({
        type: "provider",
        kind: "fallback",
        data: {
          type: "fallback",
          from: { model: "claude-fable-5" },
          to: { model: "claude-opus-4-8" },
        },
      });
      expect(message.content[1]).toEqual({
        type: "text",
        text: "The printing press was invented by Johannes Gutenberg around 1440.",
      });
      expect(message.model).toBe("claude-fable-5");
      expect(message.usage).toEqual({
        inputTokens: 412,
        outputTokens: 264,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
    },
  },
  "anthropic-refusal.sse": {
    title: "a refusal with stop_details and no content at all",
    check: ({ message }) => {
      expect(message.content).toEqual([]);
      expect(message.stopReason).toBe("refusal");
      expect(message.providerStopReason).toBe("refusal");
      expect(message.usage).toMatchObject({ inputTokens: 18, outputTokens: 5 });
    },
  },
  "duplicate-message-start.sse": {
    title: "a message_start repeated for the same message is ignored",
    check: ({ parts, message }) => {
      expect(parts.filter((part) => part.type === "start")).toHaveLength(1);
      expect(message.responseId).toBe("msg_dup");
      expect(message.content).toEqual([{ type: "text", text: "Hello, World!" }]);
      expect(message.usage).toMatchObject({ inputTokens: 17, outputTokens: 227 });
      expect(message.stopReason).toBe("end");
    },
  },
  "spliced-message-start.sse": {
    title:
      "a second message's message_start while a tool call is open ends with provider.bad-stream, keeping the first message's output",
    check: ({ parts, message }) => {
      const error = lastError(parts);
      expect(error.code).toBe("provider.bad-stream");
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('"msg_second"');
      expect(error.message).toContain('"msg_first"');
      expect(message.responseId).toBe("msg_first");
      expect(message.stopReason).toBe("error");
      expect(message.content[0]).toEqual({
        type: "reasoning",
        text: "I will call the tool.",
        signature: "sig-first",
      });
      expect(message.content[1]).toMatchObject({
        type: "tool-call",
        id: "toolu_first",
        inputText: '{"value":"Spark',
        inputError: expect.any(String),
      });
      expect(message.content).toHaveLength(2);
    },
  },
  "stream-a-refusal.sse": {
    title: "thinking with its signature, then text, then a refusal (thinking_tokens counted)",
    check: ({ message }) => {
      const thinking = message.content[0];
      expect(thinking).toMatchObject({
        type: "reasoning",
        text: expect.stringMatching(/^Simple educ/),
      });
      expect(thinking?.type === "reasoning" && thinking.signature).toBe(
        Buffer.from("synthetic-signature-fixture-a-not-a-real-signature").toString("base64"),
      );
      expect(message.content[1]).toEqual({ type: "text", text: "Hi" });
      expect(message.stopReason).toBe("refusal");
      expect(message.usage).toEqual({
        inputTokens: 28,
        outputTokens: 106,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 67,
      });
    },
  },
  "stream-a-toolrefusal.sse": {
    title: "a refusal after a server web search: the server call and its results are kept",
    check: ({ message }) => {
      expect(message.content[0]).toMatchObject({
        type: "tool-call",
        name: "web_search",
        server: true,
        input: { query: "solar eclipse viewing safety news 2026" },
      });
      expect(providerBlock(message.content[1]).kind).toBe("web_search_tool_result");
      expect(message.content[2]).toMatchObject({ type: "text" });
      expect(message.stopReason).toBe("refusal");
    },
  },
  "stream-b-fallback.sse": {
    title:
      "the fallback model's continuation of a refused turn (text resumes mid-word, padded lines)",
    check: ({ message }) => {
      expect(message.model).toBe("claude-opus-4-8");
      expect(message.content).toHaveLength(1);
      const text = message.content[0];
      expect(text?.type === "text" && text.text.startsWith(" there! Happy to expl")).toBe(true);
      expect(message.usage.reasoningTokens).toBe(0);
      expect(message.stopReason).toBe("end");
    },
  },
};

describe("synthetic Anthropic fixtures: the edge case each one exercises", () => {
  it("every synthetic stream has a named case here", () => {
    const files = readdirSync(`${PROVIDER_FIXTURES}anthropic/synthetic`).filter((name) =>
      name.endsWith(".sse"),
    );
    expect(files.sort()).toEqual(Object.keys(SYNTHETIC).sort());
  });

  for (const [file, { title, check }] of Object.entries(SYNTHETIC)) {
    it(`${file}: ${title}`, async () => {
      check(await decodeFixture(`synthetic/${file}`));
    });
  }
});

describe("recorded Anthropic fixtures: notable cases", () => {
  for (const file of [
    "anthropic-clear-thinking.1.sse",
    "anthropic-combined-context-editing.1.sse",
  ]) {
    it(`${file}: thinking text and signature arrive intact`, async () => {
      const text = fixtureBytes(`anthropic/${file}`).toString("utf8");
      const deltas = text
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => JSON.parse(line.slice(5)))
        .filter((event) => event.type === "content_block_delta" && event.index === 0)
        .map((event) => event.delta);
      const { message } = await decodeFixture(file);
      expect(message.content[0]).toEqual({
        type: "reasoning",
        text: deltas
          .filter((delta) => delta.type === "thinking_delta")
          .map((delta) => delta.thinking)
          .join(""),
        signature: deltas.find((delta) => delta.type === "signature_delta").signature,
      });
      expect((message.content[0] as { signature: string }).signature.length).toBeGreaterThan(100);
    });
  }

  it("anthropic-compaction.1.sse: the compaction block carries its compaction_delta content", async () => {
    const { message } = await decodeFixture("anthropic-compaction.1.sse");
    const block = providerBlock(message.content[0]);
    expect(block.kind).toBe("compaction");
    const data = block.data as { type: string; content: string };
    expect(data.type).toBe("compaction");
    expect(data.content).toMatch(/^## Summary of Conversation\n/);
    expect(data.content.length).toBeGreaterThan(1000);
  });

  it("anthropic-web-search-tool.1.sse: server search kept, citations left off the text", async () => {
    const { message } = await decodeFixture("anthropic-web-search-tool.1.sse");
    const kinds = message.content.map((block) =>
      block.type === "provider" ? block.kind : block.type,
    );
    expect(kinds).toContain("web_search_tool_result");
    expect(message.content[0]).toMatchObject({
      type: "tool-call",
      name: "web_search",
      server: true,
    });
    const result = message.content.find(
      (block) => block.type === "provider" && block.kind === "web_search_tool_result",
    );
    expect((result as { data: { content: unknown[] } }).data.content.length).toBeGreaterThan(0);
    for (const block of message.content) {
      if (block.type === "text") expect(Object.keys(block)).toEqual(["type", "text"]);
    }
  });

  it("anthropic-mcp.1.sse: MCP tool use gets its streamed input; its result is kept", async () => {
    const { message } = await decodeFixture("anthropic-mcp.1.sse");
    expect(providerBlock(message.content[0]).data).toEqual({
      type: "mcp_tool_use",
      id: "mcptoolu_017CuqaJcXe5ZHJjaz3KS1AT",
      name: "echo",
      input: { message: "hello world" },
      server_name: "echo",
    });
    expect(providerBlock(message.content[1]).kind).toBe("mcp_tool_result");
  });

  it("programmatic tool calling: a message that arrives whole in message_start", async () => {
    const { parts, message } = await decodeFixture(
      "anthropic-programmatic-tool-calling.1.response-5-of-15.sse",
    );
    expect(parts.map((part) => part.type)).toEqual([
      "start",
      "tool-call-start",
      "tool-call-end",
      "stop",
    ]);
    expect(message.content).toEqual([
      {
        type: "tool-call",
        id: "toolu_014ch4D3vbx928ddwxMvMvF1",
        name: "rollDie",
        inputText: '{"player":"player1"}',
        input: { player: "player1" },
      },
    ]);
    expect(message.stopReason).toBe("tool-use");
  });

  it("anthropic-message-delta-input-tokens.sse: input tokens given again in message_delta win", async () => {
    const { message } = await decodeFixture("anthropic-message-delta-input-tokens.sse");
    expect(message.usage).toEqual({
      inputTokens: 61,
      outputTokens: 2,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it("prompt cache: cached input counted into inputTokens and reported apart", async () => {
    const { message } = await decodeFixture("anthropic-code-execution-20260120-prompt-cache.1.sse");
    expect(message.usage).toMatchObject({
      inputTokens: 6 + 6289 + 3337,
      cacheReadTokens: 6289,
      cacheWriteTokens: 3337,
      outputTokens: 198,
    });
  });

  it("max_tokens inside a tool input (no content_block_stop): the call is closed, unparsed", async () => {
    const { parts, message } = await decodeFixture(
      "raw/anthropic-sdk-typescript/incomplete_partial_json_response.txt",
    );
    expect(parts.slice(-2).map((part) => part.type)).toEqual(["tool-call-end", "stop"]);
    expect(message.stopReason).toBe("max-tokens");
    expect(message.content[1]).toMatchObject({
      type: "tool-call",
      name: "make_file",
      inputText: expect.stringMatching(/^\{"filename": "taxes.txt", "lines_of_text": \[/),
      inputError: expect.any(String),
    });
    expect(message.content[1]).not.toHaveProperty("input");
  });
});
