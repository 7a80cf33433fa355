import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AssembledMessage,
  assembleMessage,
  clientToolCalls,
  messageText,
  type ProviderRequest,
  type StopReason,
  type StreamPart,
} from "../src/providers/index.js";
import { createOpenAIChatProvider, type OpenAIFlavourName } from "../src/providers/openai/index.js";
import {
  chunkBytes,
  fixtureBytes,
  PROVIDER_FIXTURES,
  type ReplayServer,
  randomChunks,
  startReplayServer,
} from "./support/replay-server.js";

// Every recorded (and hand-written) Chat Completions stream of OpenAI and the compatible servers,
// served over loopback HTTP and decoded through the real `openai` SDK. Expectations are computed
// here from the `data:` lines of each file, apart from the adapter's code.

/** The folders in Chat Completions format, with the flavour each one is decoded as. */
const FOLDERS: Record<string, OpenAIFlavourName> = {
  "openai-chat/": "openai",
  "openai-compatible/": "compatible",
  "groq/": "groq",
  "deepseek/": "deepseek",
  "mistral/": "mistral",
  "moonshotai/": "moonshot",
};

interface ManifestRow {
  path: string;
  format: string;
  encoding: string;
  provenance: string;
  derivedFrom: string;
}

const MANIFEST = new Map<string, ManifestRow>(
  readFileSync(`${PROVIDER_FIXTURES}MANIFEST.tsv`, "utf8")
    .split("\n")
    .slice(1)
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [path = "", format = "", encoding = "", provenance = "", , , derivedFrom = ""] =
        line.split("\t");
      return [path, { path, format, encoding, provenance, derivedFrom }];
    }),
);

function listFiles(folder: string): string[] {
  return readdirSync(PROVIDER_FIXTURES + folder, { withFileTypes: true })
    .flatMap((entry) => {
      const path = `${folder}${entry.name}`;
      if (entry.isDirectory()) return listFiles(`${path}/`);
      return entry.name === "README.md" ? [] : [path];
    })
    .sort();
}

const FILES = Object.keys(FOLDERS).flatMap((folder) => listFiles(folder));

function flavourOf(path: string): OpenAIFlavourName {
  const folder = Object.keys(FOLDERS).find((prefix) => path.startsWith(prefix));
  return FOLDERS[folder ?? ""] ?? "compatible";
}

/** The HTTP body of a file: SSE files as they are; JSON-lines files framed as the server would. */
function bodyOf(path: string): Buffer {
  const bytes = fixtureBytes(path);
  if (MANIFEST.get(path)?.encoding !== "jsonl") return bytes;
  const lines = bytes
    .toString("utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  return Buffer.from(`${lines.map((line) => `data: ${line}\n\n`).join("")}data: [DONE]\n\n`);
}

type Json = Record<string, unknown>;

/** The JSON payloads of a Chat Completions body (`data:` lines, `[DONE]` left out). */
function payloads(body: Buffer): Json[] {
  return body
    .toString("utf8")
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim())
    .filter((data) => data !== "" && !data.startsWith("[DONE]"))
    .map((data) => JSON.parse(data) as Json);
}

interface ExpectedCall {
  id: string | undefined;
  name: string;
  args: string;
}

interface Expected {
  responseId: string | null;
  model: string;
  text: string;
  reasoning: string;
  refusal: string;
  calls: ExpectedCall[];
  finish: string;
  usage: Record<string, number>;
}

/** Every flavour reads both spellings of reasoning, the ones its server uses first. */
const REASONING_FIELDS: Record<OpenAIFlavourName, string[]> = {
  openai: ["reasoning_content", "reasoning"],
  ollama: ["reasoning", "reasoning_content"],
  vllm: ["reasoning_content", "reasoning"],
  llamacpp: ["reasoning_content", "reasoning"],
  groq: ["reasoning", "reasoning_content"],
  deepseek: ["reasoning_content", "reasoning"],
  mistral: ["reasoning_content", "reasoning"],
  moonshot: ["reasoning_content", "reasoning"],
  openrouter: ["reasoning", "reasoning_content"],
  together: ["reasoning", "reasoning_content"],
  compatible: ["reasoning_content", "reasoning"],
};

function expectationsOf(body: Buffer, flavour: OpenAIFlavourName): Expected {
  const out: Expected = {
    responseId: null,
    model: "",
    text: "",
    reasoning: "",
    refusal: "",
    calls: [],
    finish: "",
    usage: {},
  };
  const calls = new Map<string, ExpectedCall>();
  let lastKey = "";
  for (const chunk of payloads(body)) {
    if (out.responseId === null && (chunk.id || chunk.model)) {
      out.responseId = (chunk.id as string) || null;
      out.model = (chunk.model as string) ?? "";
    }
    const choices = (chunk.choices as Json[] | undefined) ?? [];
    const choice = choices.find((c) => ((c.index as number | undefined) ?? 0) === 0);
    const delta = (choice?.delta ?? {}) as Json;
    for (const field of REASONING_FIELDS[flavour]) {
      if (typeof delta[field] === "string" && delta[field] !== "") {
        out.reasoning += delta[field];
        break;
      }
    }
    if (typeof delta.content === "string") out.text += delta.content;
    else if (Array.isArray(delta.content)) {
      for (const part of delta.content as Json[]) {
        if (part.type === "text") out.text += part.text;
        if (part.type === "thinking") {
          for (const inner of part.thinking as Json[]) out.reasoning += inner.text;
        }
      }
    }
    if (typeof delta.refusal === "string") out.refusal += delta.refusal;
    for (const call of (delta.tool_calls as Json[] | undefined) ?? []) {
      const fn = (call.function ?? {}) as Json;
      const key =
        typeof call.index === "number" ? `i${call.index}` : call.id ? `id${call.id}` : lastKey;
      lastKey = key;
      let draft = calls.get(key);
      if (!draft) {
        draft = { id: undefined, name: "", args: "" };
        calls.set(key, draft);
      }
      draft.id ??= (call.id as string | undefined) || undefined;
      if (!draft.name && fn.name) draft.name = fn.name as string;
      draft.args += (fn.arguments as string | undefined) ?? "";
    }
    if (!out.finish && typeof choice?.finish_reason === "string") out.finish = choice.finish_reason;
    const usage = (chunk.usage ?? (chunk.x_groq as Json | undefined)?.usage ?? choice?.usage) as
      | Json
      | null
      | undefined;
    if (usage) {
      const details = (usage.prompt_tokens_details ?? {}) as Json;
      const cached = [details.cached_tokens, usage.prompt_cache_hit_tokens].filter(
        (n): n is number => typeof n === "number",
      );
      out.usage = {
        inputTokens: usage.prompt_tokens as number,
        // Reasoning is part of the output, also where completion_tokens leaves it out (xAI).
        outputTokens:
          typeof usage.total_tokens === "number"
            ? usage.total_tokens - (usage.prompt_tokens as number)
            : (usage.completion_tokens as number),
        cacheReadTokens: cached.length > 0 ? Math.max(...cached) : 0,
      };
      const reasoning = (usage.completion_tokens_details as Json | undefined)?.reasoning_tokens;
      if (typeof reasoning === "number") out.usage.reasoningTokens = reasoning;
    }
  }
  out.calls = [...calls.values()];
  return out;
}

function stopReasonOf(expected: Expected): StopReason {
  switch (expected.finish) {
    case "length":
      return "max-tokens";
    case "tool_calls":
      return "tool-use";
    case "content_filter":
      return "content-filter";
    default:
      return expected.calls.length > 0 ? "tool-use" : expected.refusal ? "refusal" : "end";
  }
}

const REQUEST: ProviderRequest = {
  model: "gpt-test",
  messages: [{ role: "user", content: "Hello" }],
};

let server: ReplayServer;

beforeAll(async () => {
  server = await startReplayServer();
});

afterAll(async () => {
  await server.close();
});

async function decode(
  flavour: OpenAIFlavourName,
  chunks: Uint8Array[],
): Promise<{ parts: StreamPart[]; message: AssembledMessage }> {
  const provider = createOpenAIChatProvider({
    flavour,
    apiKey: "sk-test-fixture-key-0000000000",
    baseURL: `${server.url}/v1`,
    transport: { maxAttempts: 1 },
  });
  server.respond({ chunks });
  const parts: StreamPart[] = [];
  for await (const part of provider.stream(REQUEST)) parts.push(part);
  return { parts, message: assembleMessage("openai-chat", parts) };
}

describe("Chat Completions fixtures", () => {
  it("finds every file of the chat folders in MANIFEST.tsv, in Chat Completions format", () => {
    expect(FILES.length).toBeGreaterThan(40);
    for (const path of FILES) {
      expect(MANIFEST.get(path)?.format, path).toBe("openai-chat");
    }
  });

  // JSON-lines recordings are checked through their .sse twin (below), which carries the same data.
  const bodies = FILES.filter((path) => MANIFEST.get(path)?.encoding !== "jsonl");
  it.each(bodies)("%s decodes to what its data lines say, in any chunking", async (path) => {
    const flavour = flavourOf(path);
    const body = bodyOf(path);
    const whole = await decode(flavour, [body]);
    const split = await decode(flavour, randomChunks(body, path.length));
    expect(split.message).toEqual(whole.message);

    const { parts, message } = whole;
    const expected = expectationsOf(body, flavour);
    expect(parts.filter((part) => part.type === "error")).toEqual([]);
    expect(parts[0]?.type).toBe("start");
    expect(parts.at(-1)?.type).toBe("stop");
    expect(message.responseId).toBe(expected.responseId);
    expect(message.model).toBe(expected.model);
    expect(messageText(message)).toBe(expected.text);
    expect(textOf(message, "reasoning")).toBe(expected.reasoning);
    expect(textOf(message, "refusal")).toBe(expected.refusal);

    const calls = clientToolCalls(message);
    expect(calls.map((call) => ({ name: call.name, inputText: call.inputText }))).toEqual(
      expected.calls.map((call) => ({ name: call.name, inputText: call.args })),
    );
    for (const [index, call] of calls.entries()) {
      expect(call.input, call.inputError).toBeDefined();
      const id = expected.calls[index]?.id;
      if (id) expect(call.id).toBe(id);
    }
    expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length);

    expect(message.usage).toMatchObject(expected.usage);
    expect(message.providerStopReason).toBe(expected.finish);
    expect(message.stopReason).toBe(stopReasonOf(expected));
    assertBlockNumbering(parts);
  });

  const twins = FILES.filter((path) => MANIFEST.get(path)?.encoding === "jsonl");
  it.each(twins)("%s framed as SSE decodes exactly as its .sse twin", async (path) => {
    const twin = [...MANIFEST.values()].filter((row) => row.derivedFrom === path);
    expect(twin).toHaveLength(1);
    const flavour = flavourOf(path);
    const framed = await decode(flavour, [bodyOf(path)]);
    const recorded = await decode(flavour, [fixtureBytes(twin[0]!.path)]);
    expect(framed.parts).toEqual(recorded.parts);
  });

  it("decodes a small file fed one byte at a time exactly as whole", async () => {
    const path = "mistral/mistral-tool-call.sse";
    const body = fixtureBytes(path);
    const whole = await decode("mistral", [body]);
    const bytes = await decode("mistral", chunkBytes(body, 1));
    expect(bytes.parts).toEqual(whole.parts);
  });
});

describe("Chat Completions fixture cases", () => {
  const raw = "openai-chat/raw/openai-python/";

  it("keeps two parallel tool calls apart, each with its own block and id", async () => {
    const { parts, message } = await decode("openai", [
      fixtureBytes(`${raw}f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin`),
    ]);
    const calls = clientToolCalls(message);
    expect(calls.map((call) => [call.id, call.name])).toEqual([
      ["call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs"],
      ["call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price"],
    ]);
    expect(calls[0]?.input).toEqual({ city: "Edinburgh", country: "GB", units: "c" });
    const starts = parts.filter((part) => part.type === "tool-call-start");
    expect(new Set(starts.map((part) => part.block)).size).toBe(2);
    expect(message.stopReason).toBe("tool-use");
  });

  it("reads only choice 0 of an n=3 answer", async () => {
    const body = fixtureBytes(
      `${raw}a491adda08c3d4fde95f5b2ee3f60f7f745f1a56d82e62f58031cc2add502380.bin`,
    );
    const { message } = await decode("openai", [body]);
    const choice0 = payloads(body)
      .flatMap((chunk) => (chunk.choices as Json[]) ?? [])
      .filter((choice) => choice.index === 0)
      .map((choice) => ((choice.delta as Json).content as string | undefined) ?? "")
      .join("");
    expect(messageText(message)).toBe(choice0);
    expect(message.content.filter((block) => block.type === "text")).toHaveLength(1);
  });

  it("maps finish_reason length to max-tokens", async () => {
    const { message } = await decode("openai", [
      fixtureBytes(`${raw}4cc50a6135d254573a502310e6af1246f55edb6ad95fa24059f160996b68866d.bin`),
    ]);
    expect(message.stopReason).toBe("max-tokens");
    expect(message.providerStopReason).toBe("length");
  });

  it("turns refusal deltas into a refusal block and a refusal stop", async () => {
    const { message } = await decode("openai", [
      fixtureBytes(`${raw}173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin`),
    ]);
    expect(message.content.map((block) => block.type)).toEqual(["refusal"]);
    expect(textOf(message, "refusal")).toMatch(/^I'm sorry/);
    expect(message.stopReason).toBe("refusal");
  });

  it("skips Azure's id-less prompt-filter chunk when it takes the response id", async () => {
    const { parts } = await decode("openai", [bodyOf("openai-chat/azure-model-router.1.sse")]);
    expect(parts[0]).toEqual({
      type: "start",
      responseId: "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt",
      model: "gpt-5-nano-2025-08-07",
    });
  });

  it("takes a tool call that starts at index 1 after text (Claude through a compatible endpoint)", async () => {
    const { message } = await decode("compatible", [
      fixtureBytes("openai-compatible/anthropic-fallback-tool-call.sse"),
    ]);
    expect(message.content.map((block) => block.type)).toEqual(["text", "tool-call"]);
    expect(clientToolCalls(message)[0]).toMatchObject({
      id: "toolu_sanitized",
      name: "read_file",
      input: { path: "a.txt" },
    });
  });

  it("takes a Mistral tool call without index that arrives whole with the finish", async () => {
    const { message } = await decode("mistral", [fixtureBytes("mistral/mistral-tool-call.sse")]);
    expect(clientToolCalls(message)).toMatchObject([
      { id: "gSIMJiOkT", name: "weather", input: { location: "San Francisco" } },
    ]);
    expect(message.usage).toMatchObject({ inputTokens: 124, outputTokens: 22 });
  });

  it("reads Mistral thinking parts as reasoning and text parts as text", async () => {
    const { message } = await decode("mistral", [fixtureBytes("mistral/mistral-reasoning.sse")]);
    expect(message.content).toEqual([
      {
        type: "reasoning",
        text: "The user is asking for 2+2. This is basic arithmetic. 2+2=4.",
      },
      { type: "text", text: "2 + 2 = 4" },
    ]);
  });

  it("reads Groq's delta.reasoning and its usage on the finish chunk", async () => {
    const { message } = await decode("groq", [fixtureBytes("groq/groq-reasoning.sse")]);
    expect(message.content.map((block) => block.type)).toEqual(["reasoning", "text"]);
    expect(message.usage.inputTokens).toBeGreaterThan(0);
  });

  it("reads DeepSeek reasoning_content before a tool call", async () => {
    const { message } = await decode("deepseek", [fixtureBytes("deepseek/deepseek-tool-call.sse")]);
    expect(message.content.map((block) => block.type)).toEqual(["reasoning", "tool-call"]);
    expect(message.stopReason).toBe("tool-use");
  });

  it("synthetic/ leading-newline chunks: a leading \\n\\n content delta is kept", async () => {
    const { message } = await decode("openai", [
      fixtureBytes(
        "openai-chat/synthetic/ChatCompletionStream.test.ts.snap--stream-is-robust-against-leading-newline-chunks-1.sse",
      ),
    ]);
    expect(messageText(message).startsWith("\n\n")).toBe(true);
    expect(message.stopReason).toBe("end");
  });

  it("synthetic/ moonshot: reasoning_content then content, no object field, reasoning tokens", async () => {
    const { message } = await decode("moonshot", [
      fixtureBytes("moonshotai/synthetic/moonshotai-stream.sse"),
    ]);
    expect(message).toMatchObject({
      responseId: "chatcmpl-stream",
      model: "kimi-k3",
      content: [
        { type: "reasoning", text: "Thinking aloud. " },
        { type: "text", text: "Hello!" },
      ],
      usage: { inputTokens: 9, outputTokens: 12, reasoningTokens: 7 },
      stopReason: "end",
    });
  });
});

function textOf(message: AssembledMessage, type: "reasoning" | "refusal"): string {
  return message.content.map((block) => (block.type === type ? block.text : "")).join("");
}

/** Block numbers start at 0 and each new one is the next number. */
function assertBlockNumbering(parts: StreamPart[]): void {
  let next = 0;
  for (const part of parts) {
    if (!("block" in part)) continue;
    if (part.block === next) next++;
    else expect(part.block).toBeLessThan(next);
  }
}
