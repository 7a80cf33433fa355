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
import {
  createOpenAIResponsesProvider,
  toResponsesRequest,
} from "../src/providers/openai/index.js";
import {
  fixtureBytes,
  PROVIDER_FIXTURES,
  type ReplayServer,
  randomChunks,
  startReplayServer,
} from "./support/replay-server.js";

// Every recorded (and hand-written) Responses API stream, served over loopback HTTP and decoded
// through the real `openai` SDK. Expectations are computed here from the `data:` lines of each
// file, apart from the adapter's code.

const DIR = "openai-responses/";

interface ManifestRow {
  path: string;
  format: string;
  encoding: string;
  derivedFrom: string;
}

const MANIFEST = new Map<string, ManifestRow>(
  readFileSync(`${PROVIDER_FIXTURES}MANIFEST.tsv`, "utf8")
    .split("\n")
    .slice(1)
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [path = "", format = "", encoding = "", , , , derivedFrom = ""] = line.split("\t");
      return [path, { path, format, encoding, derivedFrom }];
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

const FILES = listFiles(DIR);

/** Streams that must end in an error, with the code they end with. */
const EXPECTED_ERRORS: Record<string, string> = {
  // `event: error` with insufficient_quota, then response.failed: an account problem, not retried.
  "openai-responses/openai-error.1.sse": "provider.auth",
};

type Json = Record<string, unknown>;

/**
 * The HTTP bodies of a file: SSE files as they are; JSON-lines files framed as the API frames them
 * (`event:` + `data:`), one body per `response.created` (multi-step recordings hold several).
 */
function bodiesOf(path: string): Buffer[] {
  const bytes = fixtureBytes(path);
  if (MANIFEST.get(path)?.encoding !== "jsonl") return [bytes];
  const responses: string[][] = [];
  for (const line of bytes.toString("utf8").split("\n")) {
    if (line.trim() === "") continue;
    const type = (JSON.parse(line) as Json).type as string;
    if (type === "response.created" || responses.length === 0) responses.push([]);
    responses.at(-1)!.push(`event: ${type}\ndata: ${line}\n\n`);
  }
  return responses.map((frames) => Buffer.from(frames.join("")));
}

/** The JSON payloads of a Responses body (`data:` lines; `[DONE]` of the synthetic files left out). */
function payloads(body: Buffer): Json[] {
  return body
    .toString("utf8")
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim())
    .filter((data) => data !== "" && !data.startsWith("[DONE]"))
    .map((data) => JSON.parse(data) as Json);
}

interface Expected {
  responseId: string | null;
  model: string;
  text: string;
  summary: string;
  reasoning: string;
  calls: { id: string; name: string; args: string }[];
  items: { kind: string; data: Json }[];
  encrypted: string[];
  final: Json | undefined;
}

function expectationsOf(body: Buffer): Expected {
  const out: Expected = {
    responseId: null,
    model: "",
    text: "",
    summary: "",
    reasoning: "",
    calls: [],
    items: [],
    encrypted: [],
    final: undefined,
  };
  for (const event of payloads(body)) {
    const item = event.item as Json | undefined;
    switch (event.type) {
      case "response.created":
        out.responseId = (event.response as Json).id as string;
        out.model = (event.response as Json).model as string;
        break;
      case "response.output_text.delta":
        out.text += event.delta;
        break;
      case "response.reasoning_summary_text.delta":
        out.summary += event.delta;
        break;
      case "response.reasoning_text.delta":
        out.reasoning += event.delta;
        break;
      case "response.output_item.done":
        if (item?.type === "function_call") {
          out.calls.push({
            id: item.call_id as string,
            name: item.name as string,
            args: item.arguments as string,
          });
        } else if (item?.type === "reasoning") {
          if (item.encrypted_content) out.encrypted.push(item.encrypted_content as string);
        } else if (item && item.type !== "message") {
          out.items.push({ kind: item.type as string, data: item });
        }
        break;
      case "response.completed":
      case "response.incomplete":
        out.final = event.response as Json;
        break;
    }
  }
  return out;
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
  chunks: Uint8Array[],
): Promise<{ parts: StreamPart[]; message: AssembledMessage }> {
  const provider = createOpenAIResponsesProvider({
    apiKey: "sk-test-fixture-key-0000000000",
    baseURL: `${server.url}/v1`,
    transport: { maxAttempts: 1 },
  });
  server.respond({ chunks });
  const parts: StreamPart[] = [];
  for await (const part of provider.stream(REQUEST)) parts.push(part);
  return { parts, message: assembleMessage("openai-responses", parts) };
}

// JSON-lines recordings are checked through their .sse twins (below), which carry the same data.
const SSE_FILES = FILES.filter((path) => MANIFEST.get(path)?.encoding !== "jsonl");

describe("Responses fixtures", () => {
  it("finds every file of the folder in MANIFEST.tsv, in Responses format", () => {
    expect(FILES.length).toBeGreaterThan(60);
    for (const path of FILES) expect(MANIFEST.get(path)?.format, path).toBe("openai-responses");
  });

  it.each(SSE_FILES)("%s decodes to what its data lines say, in any chunking", async (path) => {
    const body = fixtureBytes(path);
    const whole = await decode([body]);
    const split = await decode(randomChunks(body, body.length, 3000));
    expect(split.parts).toEqual(whole.parts);

    const { parts, message } = whole;
    const expected = expectationsOf(body);
    expect(parts[0]?.type).toBe("start");
    expect(message.responseId).toBe(expected.responseId);
    expect(message.model).toBe(expected.model);
    expect(messageText(message)).toBe(expected.text);
    const errorCode = EXPECTED_ERRORS[path];
    if (errorCode) {
      expect(parts.at(-1)).toMatchObject({ type: "error", error: { code: errorCode } });
      expect(parts.filter((part) => part.type === "retry")).toEqual([]);
      return;
    }
    expect(parts.filter((part) => part.type === "error")).toEqual([]);
    expect(parts.at(-1)?.type).toBe("stop");

    const reasoning = message.content.filter((block) => block.type === "reasoning");
    const summaries = reasoning.filter((block) => block.summary);
    expect(summaries.map((block) => block.text).join("")).toBe(expected.summary);
    expect(
      reasoning
        .filter((block) => !block.summary)
        .map((block) => block.text)
        .join(""),
    ).toBe(expected.reasoning);
    const signed = reasoning.flatMap((block) =>
      block.signature ? [(JSON.parse(block.signature) as Json).encrypted_content] : [],
    );
    for (const encrypted of expected.encrypted) expect(signed).toContain(encrypted);

    const calls = clientToolCalls(message);
    expect(
      calls.map((call) => ({ id: call.id, name: call.name, inputText: call.inputText })),
    ).toEqual(
      expected.calls.map((call) => ({ id: call.id, name: call.name, inputText: call.args })),
    );
    for (const call of calls) expect(call.input, call.inputError).toBeDefined();

    const items = message.content.flatMap((block) =>
      block.type === "provider" && block.kind !== "annotations"
        ? [{ kind: block.kind, data: block.data }]
        : [],
    );
    expect(items).toEqual(expected.items);

    const final = expected.final!;
    const usage = final.usage as Json;
    expect(message.usage).toMatchObject({
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cacheReadTokens: (usage.input_tokens_details as Json).cached_tokens,
      reasoningTokens: (usage.output_tokens_details as Json).reasoning_tokens,
    });
    const hasCall = (final.output as Json[]).some((item) => item.type === "function_call");
    const stop: StopReason = hasCall ? "tool-use" : "end";
    expect(message.stopReason).toBe(stop);
    expect(message.providerStopReason).toBe("completed");
    assertBlockNumbering(parts);
  });

  const twins = FILES.filter((path) => MANIFEST.get(path)?.encoding === "jsonl");
  it.each(twins)("%s framed as SSE decodes exactly as its .sse twin(s)", async (path) => {
    const recorded = [...MANIFEST.values()]
      .filter((row) => row.derivedFrom === path)
      .map((row) => row.path)
      .sort((a, b) => responseNumber(a) - responseNumber(b));
    const framed = bodiesOf(path);
    expect(framed).toHaveLength(recorded.length);
    for (const [index, twin] of recorded.entries()) {
      const ours = await decode([framed[index]!]);
      const theirs = await decode([fixtureBytes(twin)]);
      expect(ours.parts).toEqual(theirs.parts);
    }
  });
});

function responseNumber(path: string): number {
  return Number(/response-(\d+)-of/.exec(path)?.[1] ?? 0);
}

describe("Responses fixture cases", () => {
  it("keeps encrypted reasoning and the call id so the turn can be sent back", async () => {
    const { message } = await decode([
      fixtureBytes(`${DIR}openai-reasoning-encrypted-content.1.response-1-of-4.sse`),
    ]);
    const body = toResponsesRequest({
      model: "gpt-test",
      messages: [{ role: "assistant", content: message.content }],
    });
    const input = body.input as unknown as Json[];
    const reasoning = input.filter((item) => item.type === "reasoning");
    expect(reasoning.length).toBeGreaterThan(0);
    for (const item of reasoning) {
      expect(item.id).toMatch(/^rs_/);
      expect(item.encrypted_content).toEqual(expect.any(String));
    }
    const calls = input.filter((item) => item.type === "function_call");
    expect(calls.map((call) => call.call_id)).toEqual(
      clientToolCalls(message).map((call) => call.id),
    );
  });

  it("reads summaries of a gateway that rotates item ids on every event", async () => {
    const { message } = await decode([fixtureBytes(`${DIR}github-copilot-id-rotation.1.sse`)]);
    expect(message.content.map((block) => block.type)).toEqual(["reasoning", "text"]);
    expect(message.content[0]).toMatchObject({
      summary: true,
      text: "**Counting character occurrences**",
    });
  });

  it("turns built-in tool items into provider blocks with the final item", async () => {
    const { message } = await decode([fixtureBytes(`${DIR}openai-web-search-tool.1.sse`)]);
    const searches = message.content.filter(
      (block) => block.type === "provider" && block.kind === "web_search_call",
    );
    expect(searches.length).toBeGreaterThan(0);
    for (const block of searches) {
      expect(block).toMatchObject({ data: { status: "completed" } });
    }
    expect(message.content.some((b) => b.type === "provider" && b.kind === "annotations")).toBe(
      true,
    );
  });

  it("synthetic/ standard text: data-only frames ending in [DONE] decode", async () => {
    const { message } = await decode([
      fixtureBytes(`${DIR}synthetic/ResponseStream.test.ts.snap--stream-standard-text-works-1.sse`),
    ]);
    expect(message).toMatchObject({ responseId: "resp_test_1", stopReason: "end" });
    expect(messageText(message)).not.toBe("");
  });

  it("synthetic/ reasoning: reasoning_text deltas become reasoning that is not a summary", async () => {
    const { message } = await decode([
      fixtureBytes(`${DIR}synthetic/ResponseStream.test.ts.snap--stream-reasoning-works-1.sse`),
    ]);
    expect(message.content).toEqual([
      { type: "reasoning", text: "Chain: Step 1. Step 2." },
      { type: "text", text: "The answer is 42" },
    ]);
    expect(message.usage).toMatchObject({ outputTokens: 6, reasoningTokens: 2 });
  });

  it("synthetic/ apply-patch delete: an apply_patch_call item with no deltas is a provider block", async () => {
    const { message } = await decode([
      fixtureBytes(`${DIR}synthetic/openai-apply-patch-tool-delete.1.sse`),
    ]);
    expect(message.content).toEqual([
      {
        type: "provider",
        kind: "apply_patch_call",
        data: expect.objectContaining({
          call_id: "call_delete_1",
          status: "completed",
          operation: { type: "delete_file", path: "obsolete.txt" },
        }),
      },
    ]);
    expect(message.stopReason).toBe("end");
  });

  it("synthetic/ custom tool: a freeform custom_tool_call (no sequence numbers) is a provider block, not a JSON tool call", async () => {
    const { message } = await decode([fixtureBytes(`${DIR}synthetic/openai-custom-tool.1.sse`)]);
    expect(clientToolCalls(message)).toEqual([]);
    expect(message.content).toEqual([
      {
        type: "provider",
        kind: "custom_tool_call",
        data: expect.objectContaining({
          call_id: "call_custom_sql_001",
          input: "SELECT * FROM users WHERE age > 25",
        }),
      },
    ]);
  });
});

/** Block numbers start at 0 and each new one is the next number. */
function assertBlockNumbering(parts: StreamPart[]): void {
  let next = 0;
  for (const part of parts) {
    if (!("block" in part)) continue;
    if (part.block === next) next++;
    else expect(part.block).toBeLessThan(next);
  }
}
