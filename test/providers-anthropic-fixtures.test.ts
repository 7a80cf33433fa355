import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../src/providers/anthropic/index.js";
import {
  type AssembledMessage,
  assembleMessage,
  type ContentBlock,
  type Provider,
  type ProviderRequest,
  type StopReason,
  type StreamPart,
  type Usage,
} from "../src/providers/index.js";
import {
  chunkBytes,
  fixtureBytes,
  PROVIDER_FIXTURES,
  type ReplayServer,
  randomChunks,
  startReplayServer,
} from "./support/replay-server.js";

// Every recorded or hand-written Anthropic stream, served over loopback HTTP and decoded through
// the real SDK. Expectations are computed here from the `data:` lines of each file, apart from
// the adapter's code.

const DIR = "anthropic/";
const ROOT = `${PROVIDER_FIXTURES}${DIR}`;

/** Every SSE body: `*.sse`, and the raw wire captures kept as `.txt` under `raw/`. */
function listStreams(folder = ""): string[] {
  return readdirSync(ROOT + folder, { withFileTypes: true })
    .flatMap((entry) => {
      const path = `${folder}${entry.name}`;
      if (entry.isDirectory()) return listStreams(`${path}/`);
      const rawText = path.startsWith("raw/") && path.endsWith(".txt");
      return path.endsWith(".sse") || rawText ? [path] : [];
    })
    .sort();
}

const STREAMS = listStreams();

/** Streams that must end in an error, with the code they end with. */
const EXPECTED_ERRORS: Record<string, string> = {
  "synthetic/spliced-message-start.sse": "provider.bad-stream",
};

/** Tool calls whose input is expected not to parse (cut by `max_tokens` mid-input). */
const UNPARSED_TOOL_CALLS: Record<string, string[]> = {
  "raw/anthropic-sdk-typescript/incomplete_partial_json_response.txt": [
    "toolu_01EKqbqmZrGRXy18eN7m9kvY",
  ],
};

const REQUEST: ProviderRequest = {
  model: "claude-sonnet-5",
  messages: [{ role: "user", content: "Hello" }],
};

let server: ReplayServer;
let provider: Provider;

beforeAll(async () => {
  server = await startReplayServer();
  provider = createAnthropicProvider({
    apiKey: "sk-ant-test-fixture-key-000000000000",
    baseURL: server.url,
    transport: { maxAttempts: 1 },
  });
});

afterAll(async () => {
  await server.close();
});

async function serve(chunks: (string | Uint8Array)[]): Promise<StreamPart[]> {
  server.respond({ chunks });
  const parts: StreamPart[] = [];
  for await (const part of provider.stream(REQUEST)) parts.push(part);
  return parts;
}

async function decodeFile(
  path: string,
): Promise<{ parts: StreamPart[]; message: AssembledMessage }> {
  const parts = await serve([fixtureBytes(DIR + path)]);
  return { parts, message: assembleMessage("anthropic", parts) };
}

type Json = Record<string, unknown>;

interface ExpectedBlock {
  type: string;
  start: Json;
  text: string;
  json: string;
  signature: string;
  stopped: boolean;
}

interface Expected {
  responseId: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  providerReason: string | null;
  blocks: ExpectedBlock[];
}

const STOP_WORDS: Record<string, StopReason> = {
  end_turn: "end",
  tool_use: "tool-use",
  max_tokens: "max-tokens",
  refusal: "refusal",
  stop_sequence: "stop-sequence",
  pause_turn: "pause",
};

function dataLines(text: string): Json[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice("data:".length)) as Json);
}

/** What a stream says about itself, read straight from its `data:` lines. */
function expectationOf(text: string): Expected {
  const events = dataLines(text);
  const start = events.find((event) => event.type === "message_start")?.message as Json;
  const tokens = { input: 0, read: 0, write: 0, output: 0 };
  let reasoning: number | undefined;
  let stop: string | null = null;
  const blocks: ExpectedBlock[] = [];
  const takeUsage = (usage: Json) => {
    if (typeof usage.input_tokens === "number") tokens.input = usage.input_tokens;
    if (typeof usage.cache_read_input_tokens === "number")
      tokens.read = usage.cache_read_input_tokens;
    if (typeof usage.cache_creation_input_tokens === "number")
      tokens.write = usage.cache_creation_input_tokens;
    if (typeof usage.output_tokens === "number") tokens.output = usage.output_tokens;
    const details = usage.output_tokens_details as Json | undefined;
    if (typeof details?.thinking_tokens === "number") reasoning = details.thinking_tokens;
  };
  const open = (index: number, block: Json) => {
    blocks[index] = {
      type: block.type as string,
      start: block,
      text: String(block.text ?? block.thinking ?? ""),
      json: "",
      signature: String(block.signature ?? ""),
      stopped: false,
    };
  };
  takeUsage(start.usage as Json);
  if (typeof start.stop_reason === "string") stop = start.stop_reason;
  for (const [index, block] of (start.content as Json[]).entries()) {
    open(index, block);
    (blocks[index] as ExpectedBlock).stopped = true;
  }
  for (const event of events) {
    const block = blocks[event.index as number];
    if (event.type === "content_block_start")
      open(event.index as number, event.content_block as Json);
    if (event.type === "content_block_stop" && block) block.stopped = true;
    if (event.type === "content_block_delta" && block) {
      const delta = event.delta as Json;
      if (delta.type === "text_delta") block.text += delta.text;
      if (delta.type === "thinking_delta") block.text += delta.thinking;
      if (delta.type === "signature_delta") block.signature += delta.signature;
      if (delta.type === "input_json_delta") block.json += delta.partial_json;
    }
    if (event.type === "message_delta") {
      takeUsage(event.usage as Json);
      const reason = (event.delta as Json).stop_reason;
      if (typeof reason === "string") stop = reason;
    }
  }
  const usage: Usage = {
    inputTokens: tokens.input + tokens.read + tokens.write,
    outputTokens: tokens.output,
    cacheReadTokens: tokens.read,
    cacheWriteTokens: tokens.write,
  };
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return {
    responseId: start.id as string,
    model: start.model as string,
    usage,
    stopReason: (stop && STOP_WORDS[stop]) || "other",
    providerReason: stop,
    blocks,
  };
}

function expectBlock(
  path: string,
  actual: ContentBlock | undefined,
  expected: ExpectedBlock,
): void {
  switch (expected.type) {
    case "text":
      expect(actual).toEqual({ type: "text", text: expected.text });
      return;
    case "thinking":
      expect(actual).toEqual({
        type: "reasoning",
        text: expected.text,
        ...(expected.signature ? { signature: expected.signature } : {}),
      });
      return;
    case "redacted_thinking":
      expect(actual).toEqual({ type: "redacted-reasoning", data: expected.start.data });
      return;
    case "tool_use":
    case "server_tool_use": {
      const call = actual as Extract<ContentBlock, { type: "tool-call" }>;
      expect(call.type).toBe("tool-call");
      expect(call.id).toBe(expected.start.id);
      expect(call.name).toBe(expected.start.name);
      expect(call.server).toBe(expected.type === "server_tool_use" ? true : undefined);
      const startInput = expected.start.input as Json | undefined;
      const whole =
        startInput && Object.keys(startInput).length > 0 ? JSON.stringify(startInput) : "";
      const inputText = expected.json || whole;
      expect(call.inputText).toBe(inputText);
      if (UNPARSED_TOOL_CALLS[path]?.includes(call.id)) {
        expect(expected.stopped).toBe(false);
        expect(call.input).toBeUndefined();
        expect(call.inputError).toEqual(expect.any(String));
      } else {
        expect(call.inputError).toBeUndefined();
        expect(call.input).toEqual(inputText === "" ? {} : JSON.parse(inputText));
      }
      return;
    }
    default: {
      expect(actual?.type).toBe("provider");
      const block = actual as Extract<ContentBlock, { type: "provider" }>;
      expect(block.kind).toBe(expected.type);
      expect((block.data as Json).type).toBe(expected.type);
      if (expected.json !== "")
        expect((block.data as Json).input).toEqual(JSON.parse(expected.json));
    }
  }
}

describe("every Anthropic fixture decodes through the SDK to what the stream says", () => {
  it("finds the fixtures", () => {
    expect(STREAMS.length).toBeGreaterThanOrEqual(60);
    expect(STREAMS.filter((path) => path.startsWith("synthetic/")).length).toBeGreaterThan(0);
    expect(STREAMS.filter((path) => path.startsWith("raw/")).length).toBeGreaterThan(0);
  });

  for (const path of STREAMS.filter((path) => !(path in EXPECTED_ERRORS))) {
    it(path, async () => {
      const text = fixtureBytes(DIR + path).toString("utf8");
      const expected = expectationOf(text);
      const { parts, message } = await decodeFile(path);
      expect(parts.filter((part) => part.type === "error")).toEqual([]);
      expect(parts[0]?.type).toBe("start");
      expect(parts.filter((part) => part.type === "start")).toHaveLength(1);
      expect(parts.at(-1)?.type).toBe("stop");
      expect(parts.filter((part) => part.type === "stop")).toHaveLength(1);
      expect(message.responseId).toBe(expected.responseId);
      expect(message.model).toBe(expected.model);
      expect(message.usage).toEqual(expected.usage);
      expect(message.stopReason).toBe(expected.stopReason);
      expect(message.providerStopReason).toBe(expected.providerReason);
      expect(message.content).toHaveLength(expected.blocks.length);
      for (const [index, block] of expected.blocks.entries()) {
        expectBlock(path, message.content[index], block);
      }
      for (const part of parts) {
        if ("block" in part) expect(part.block).toBeLessThan(expected.blocks.length);
      }
    });
  }

  for (const [path, code] of Object.entries(EXPECTED_ERRORS)) {
    it(`${path} ends with ${code}`, async () => {
      const { parts } = await decodeFile(path);
      const last = parts.at(-1);
      expect(last?.type).toBe("error");
      expect(last?.type === "error" && last.error.code).toBe(code);
    });
  }
});

describe("Anthropic fixtures decode the same however the bytes are chunked", () => {
  // One byte at a time splits every line, every UTF-8 sequence (the em dashes of stream-a) and
  // Anthropic's padded `data:` lines; kept to a few small files, for speed.
  const BYTE_BY_BYTE = new Set([
    "anthropic-text.sse",
    "anthropic-clear-thinking.1.sse",
    "anthropic-programmatic-tool-calling.1.response-5-of-15.sse",
    "raw/anthropic-sdk-typescript/incomplete_partial_json_response.txt",
    "synthetic/stream-a-refusal.sse",
  ]);

  it("byte-by-byte files exist", () => {
    for (const path of BYTE_BY_BYTE) expect(STREAMS).toContain(path);
  });

  for (const [seed, path] of STREAMS.entries()) {
    const title = BYTE_BY_BYTE.has(path)
      ? "random chunk sizes and 1-byte chunks"
      : "random chunk sizes";
    it(`${path}: ${title} (seed ${seed})`, async () => {
      const bytes = fixtureBytes(DIR + path);
      const whole = await serve([bytes]);
      const chunks = randomChunks(bytes, seed + 1, Math.min(700, bytes.length / 2));
      expect(chunks.length).toBeGreaterThan(1);
      expect(await serve(chunks)).toEqual(whole);
      if (BYTE_BY_BYTE.has(path)) expect(await serve(chunkBytes(bytes, 1))).toEqual(whole);
    });
  }
});

describe("each .chunks.txt decodes like its generated .sse twin", () => {
  const chunkFiles = readdirSync(ROOT, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".chunks.txt"))
    .sort();

  it("finds the .chunks.txt files", () => {
    expect(chunkFiles.length).toBeGreaterThan(20);
  });

  for (const path of chunkFiles) {
    it(path, async () => {
      const lines = readFileSync(ROOT + path, "utf8")
        .split("\n")
        .filter((line) => line !== "");
      // Multi-step recordings hold several HTTP responses, each opened by a message_start
      // (synthetic files are never split, even when they repeat message_start).
      const responses: string[][] = [];
      for (const line of lines) {
        const type = (JSON.parse(line) as Json).type;
        const split = !path.startsWith("synthetic/") && type === "message_start";
        if (split || responses.length === 0) responses.push([]);
        responses.at(-1)?.push(line);
      }
      const stem = path.slice(0, -".chunks.txt".length);
      for (const [index, response] of responses.entries()) {
        const twin =
          responses.length === 1
            ? `${stem}.sse`
            : `${stem}.response-${index + 1}-of-${responses.length}.sse`;
        const body = response
          .map((line) => `event: ${(JSON.parse(line) as Json).type}\ndata: ${line}\n\n`)
          .join("");
        const fromLines = await serve([body]);
        expect(fromLines).toEqual((await decodeFile(twin)).parts);
      }
    });
  }
});
