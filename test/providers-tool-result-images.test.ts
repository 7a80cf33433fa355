import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../src/providers/anthropic/index.js";
import {
  createProvider,
  createTokenEstimator,
  IMAGE_TOKENS,
  type Provider,
  type ProviderMessage,
  type ProviderRequest,
  resolveProviderSettings,
  type StreamPart,
  type ToolResult,
} from "../src/providers/index.js";
import {
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  toChatRequest,
} from "../src/providers/openai/index.js";
import { anthropicTextFrames } from "./support/anthropic-sse.js";
import { collect } from "./support/events.js";
import { openaiTextFrames } from "./support/openai-sse.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";
import { responsesSse } from "./support/responses-server.js";
import { PNG_SIGNATURE, tinyPng } from "./support/tiny-png.js";

// A tool result carrying a screenshot (a real PNG), sent through each real SDK to a loopback
// server that keeps the request body: the image must arrive where and as its API takes it.

type Json = Record<string, unknown>;
type Image = NonNullable<ToolResult["images"]>[number];

const PNG = tinyPng(3, 2, [0, 128, 255]);
const SECOND_PNG = tinyPng(1, 1, [255, 255, 0]);
const shot: Image = { type: "image", mediaType: "image/png", data: PNG };
const second: Image = { type: "image", mediaType: "image/png", data: SECOND_PNG };
const url = (image: Image) => `data:${image.mediaType};base64,${image.data}`;

const call = (id: string, name: string) => ({
  type: "tool-call" as const,
  id,
  name,
  input: {},
  inputText: "{}",
});

/** Two calls answered by two tool messages: a screenshot (two images), then a text-only result. */
const MESSAGES: ProviderMessage[] = [
  { role: "user", content: "Open the shop and look at it." },
  {
    role: "assistant",
    content: [call("call_1", "browser.screenshot"), call("call_2", "browser.snapshot")],
  },
  {
    role: "tool",
    results: [
      {
        toolCallId: "call_1",
        name: "browser.screenshot",
        output: "Screenshot of http://shop.test/",
        images: [shot, second],
      },
    ],
  },
  {
    role: "tool",
    results: [{ toolCallId: "call_2", name: "browser.snapshot", output: '- button "Buy" [e1]' }],
  },
  { role: "user", content: "What do you see?" },
];

const request = (model: string): ProviderRequest => ({ model, messages: MESSAGES });

let server: ReplayServer;
beforeAll(async () => {
  server = await startReplayServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

/** Streams `request` through `provider` and returns the body the server received. */
async function sentBody(provider: Provider, model: string): Promise<Json> {
  const parts: StreamPart[] = await collect(provider.stream(request(model)));
  expect(parts.at(-1)?.type).toBe("stop");
  expect(server.requests).toHaveLength(1);
  return JSON.parse(server.requests[0]!.body) as Json;
}

const KEY = "sk-loopback-images-0123456789";

it("the test image is a real PNG", () => {
  expect(Buffer.from(PNG, "base64").subarray(0, 8)).toEqual(PNG_SIGNATURE);
  expect(Buffer.from(PNG, "base64").subarray(12, 16).toString("latin1")).toBe("IHDR");
});

describe("a tool result's images reach each API", () => {
  it("Anthropic: the tool_result's content is its text, then one image block per image", async () => {
    server.respond({ chunks: anthropicTextFrames(["I see a shop."]) });
    const provider = createAnthropicProvider({ apiKey: KEY, baseURL: server.url });
    const body = await sentBody(provider, "claude-sonnet-4-5");
    const image = (data: string) => ({
      type: "image",
      source: { type: "base64", media_type: "image/png", data },
    });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Open the shop and look at it." }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_1", name: "browser.screenshot", input: {} },
          { type: "tool_use", id: "call_2", name: "browser.snapshot", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "call_1",
            content: [
              { type: "text", text: "Screenshot of http://shop.test/" },
              image(PNG),
              image(SECOND_PNG),
            ],
          },
          { type: "tool_result", tool_use_id: "call_2", content: '- button "Buy" [e1]' },
          { type: "text", text: "What do you see?" },
        ],
      },
    ]);
  });

  it("OpenAI Chat: every tool message first, then one user message naming the call and its images", async () => {
    server.respond({ chunks: openaiTextFrames(["I see a shop."]) });
    const provider = createOpenAIChatProvider({ apiKey: KEY, baseURL: server.url });
    const body = await sentBody(provider, "gpt-4.1");
    expect((body.messages as Json[]).slice(2)).toEqual(chatTail());
  });

  it("OpenAI Responses: the function_call_output's output is a list of input_text and input_image", async () => {
    server.respond({ chunks: [responsesSse("resp_1", { text: "I see a shop." })] });
    const provider = createOpenAIResponsesProvider({ apiKey: KEY, baseURL: server.url });
    const body = await sentBody(provider, "gpt-4.1");
    const input = body.input as Json[];
    expect(input.map((item) => item.type ?? item.role)).toEqual([
      "user",
      "function_call",
      "function_call",
      "function_call_output",
      "function_call_output",
      "user",
    ]);
    expect(input[3]).toEqual({
      type: "function_call_output",
      call_id: "call_1",
      output: [
        { type: "input_text", text: "Screenshot of http://shop.test/" },
        { type: "input_image", image_url: url(shot), detail: "auto" },
        { type: "input_image", image_url: url(second), detail: "auto" },
      ],
    });
    expect(input[4]).toEqual({
      type: "function_call_output",
      call_id: "call_2",
      output: '- button "Buy" [e1]',
    });
  });

  it("an OpenAI-compatible server found by OPENAI_BASE_URL gets the same user message with the images", async () => {
    server.respond({ chunks: openaiTextFrames(["I see a shop."]) });
    const settings = resolveProviderSettings(
      {},
      { OPENAI_BASE_URL: `${server.url}/v1`, SPOOL_MODEL: "qwen2.5-vl" },
    );
    expect(settings.flavour).toBe("compatible");
    const body = await sentBody(createProvider(settings), "qwen2.5-vl");
    expect(server.requests[0]!.url).toBe("/v1/chat/completions");
    expect((body.messages as Json[]).slice(2)).toEqual(chatTail());
  });

  it.each(["ollama", "vllm", "llamacpp"] as const)(
    "the %s flavour keeps the images' user message",
    async (flavour) => {
      server.respond({ chunks: openaiTextFrames(["I see a shop."]) });
      const provider = createOpenAIChatProvider({ flavour, baseURL: server.url });
      const body = await sentBody(provider, "qwen2.5-vl");
      expect((body.messages as Json[]).slice(2)).toEqual(chatTail());
    },
  );

  it("a result with images and no output sends the images alone", async () => {
    const bare: ProviderRequest = {
      model: "claude-sonnet-4-5",
      messages: [
        MESSAGES[0]!,
        { role: "assistant", content: [call("call_1", "browser.screenshot")] },
        { role: "tool", results: [{ toolCallId: "call_1", output: "", images: [shot] }] },
      ],
    };
    server.respond({ chunks: anthropicTextFrames(["ok"]) });
    const parts = await collect(
      createAnthropicProvider({ apiKey: KEY, baseURL: server.url }).stream(bare),
    );
    expect(parts.at(-1)?.type).toBe("stop");
    const messages = (JSON.parse(server.requests[0]!.body) as Json).messages as Json[];
    expect(messages.at(-1)).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "call_1",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          ],
        },
      ],
    });
  });
});

/** The Chat messages after the first user message and the assistant's calls. */
function chatTail(): Json[] {
  return [
    { role: "tool", tool_call_id: "call_1", content: "Screenshot of http://shop.test/" },
    { role: "tool", tool_call_id: "call_2", content: '- button "Buy" [e1]' },
    {
      role: "user",
      content: [
        { type: "text", text: "Images returned by tool call call_1:" },
        { type: "image_url", image_url: { url: url(shot) } },
        { type: "image_url", image_url: { url: url(second) } },
      ],
    },
    { role: "user", content: "What do you see?" },
  ];
}

const image = fc.record({
  type: fc.constant("image" as const),
  mediaType: fc.constantFrom("image/png", "image/jpeg"),
  data: fc.base64String({ minLength: 4, maxLength: 24 }),
});
const result = (index: number) =>
  fc.record(
    {
      toolCallId: fc.constant(`call_${index}`),
      output: fc.string({ maxLength: 20 }),
      images: fc.array(image, { maxLength: 3 }),
    },
    { requiredKeys: ["toolCallId", "output"] },
  );
/** A step's results split over one to three consecutive `tool` messages. */
const toolMessages = fc
  .integer({ min: 1, max: 5 })
  .chain((count) =>
    fc.tuple(
      fc.tuple(...Array.from({ length: count }, (_, index) => result(index + 1))),
      fc.array(fc.integer({ min: 1, max: count }), { maxLength: 2 }),
    ),
  )
  .map(([results, cuts]): ProviderMessage[] => {
    const bounds = [...new Set([0, ...cuts, results.length])].sort((a, b) => a - b);
    return bounds.slice(1).map((end, index) => ({
      role: "tool",
      results: results.slice(bounds[index], end),
    }));
  });

describe("Chat ordering, for any split of a step's results", () => {
  it("answers every call with a tool message before any user message, and sends each image once, after its call's name", () => {
    fc.assert(
      fc.property(toolMessages, (tools) => {
        const results = tools.flatMap((message) =>
          message.role === "tool" ? message.results : [],
        );
        const calls = results.map((r) => call(r.toolCallId, "browser.screenshot"));
        const body = toChatRequest({
          model: "gpt-4.1",
          messages: [{ role: "assistant", content: calls }, ...tools],
        });
        const after = body.messages.slice(1);
        const toolCount = results.length;
        expect(after.slice(0, toolCount).map((m) => m.role)).toEqual(results.map(() => "tool"));
        const rest = after.slice(toolCount);
        const expected = results.flatMap((r) =>
          (r.images ?? []).length === 0
            ? []
            : [
                { type: "text", text: `Images returned by tool call ${r.toolCallId}:` },
                ...r.images!.map((i) => ({ type: "image_url", image_url: { url: url(i) } })),
              ],
        );
        if (expected.length === 0) expect(rest).toEqual([]);
        else expect(rest).toEqual([{ role: "user", content: expected }]);
      }),
    );
  });
});

describe("the token estimate of a request", () => {
  it("grows by IMAGE_TOKENS per tool-result image, as for a user's image", () => {
    const estimator = createTokenEstimator();
    const without: ProviderMessage[] = MESSAGES.map((message) =>
      message.role === "tool"
        ? { role: "tool", results: message.results.map(({ images: _, ...rest }) => rest) }
        : message,
    );
    for (const model of ["claude-sonnet-4-5", "gpt-4.1", "some-local-model"]) {
      const withImages = estimator.estimate(model, { messages: MESSAGES });
      const plain = estimator.estimate(model, { messages: without });
      expect(withImages - plain).toBe(2 * IMAGE_TOKENS);
      const userImage = estimator.estimate(model, {
        messages: [{ role: "user", content: [shot] }],
      });
      const userEmpty = estimator.estimate(model, { messages: [{ role: "user", content: [] }] });
      expect(userImage - userEmpty).toBe(IMAGE_TOKENS);
    }
  });
});
