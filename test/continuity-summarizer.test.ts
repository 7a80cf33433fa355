import { describe, expect, it } from "vitest";
import { BROWSER_SUMMARIZER, selectSummarizer } from "../src/continuity/summarizer-selection.js";
import { renderSummarizerInputs, renderTranscript } from "../src/continuity/transcript-content.js";
import {
  CONTINUATION_DEFAULTS,
  type ContinuationConfig,
  checkInputs,
  createItemSpace,
  findBuiltinDir,
} from "../src/directives/index.js";
import type { ProviderMessage } from "../src/providers/index.js";

const continuation = (over: Partial<ContinuationConfig> = {}): ContinuationConfig => ({
  ...CONTINUATION_DEFAULTS,
  ...over,
});

describe("selectSummarizer", () => {
  const settings = continuation({
    summaryDirectiveOverrides: { research: "research_digest", browser: "browser_digest" },
    summarizers: { research_digest: { resumeCeilingTokens: 9000 } },
    summaryLimitOverrides: { thread_summary: { maxTurns: 1 } },
  });
  const everything = () => true;
  const nothing = () => false;

  it("the running directive's own <summarizer> comes first", () => {
    const asked: string[] = [];
    const choice = selectSummarizer({
      directive: { name: "research", summarizer: "my_summary" },
      continuation: settings,
      exists: (name) => {
        asked.push(name);
        return true;
      },
    });
    expect(choice).toEqual({
      name: "my_summary",
      source: "directive",
      maxSummaryTokens: 4000,
      resumeCeilingTokens: 16000,
    });
    expect(asked).toEqual([]);
  });

  it("then summary_directive_overrides, by the directive's name", () => {
    expect(
      selectSummarizer({
        directive: { name: "research" },
        continuation: settings,
        exists: everything,
      }),
    ).toEqual({
      name: "research_digest",
      source: "override",
      maxSummaryTokens: 4000,
      resumeCeilingTokens: 9000,
    });
  });

  it("then <directive>_summarizer when that directive exists", () => {
    const asked: string[] = [];
    const exists = (name: string) => {
      asked.push(name);
      return name === "streams/watch_summarizer";
    };
    expect(
      selectSummarizer({ directive: { name: "streams/watch" }, continuation: settings, exists }),
    ).toMatchObject({ name: "streams/watch_summarizer", source: "convention" });
    expect(asked).toEqual(["streams/watch_summarizer"]);
  });

  it("then the agent's default (a browser agent's browser_summarizer), when it exists", () => {
    const asked: string[] = [];
    const exists = (name: string) => {
      asked.push(name);
      return name === BROWSER_SUMMARIZER;
    };
    const agentDefault = BROWSER_SUMMARIZER;
    expect(
      selectSummarizer({
        directive: { name: "shop" },
        continuation: settings,
        exists,
        agentDefault,
      }),
    ).toMatchObject({ name: "browser_summarizer", source: "agent" });
    expect(asked).toEqual(["shop_summarizer", "browser_summarizer"]);
    // Everything before it still wins: the directive's own, the override, the convention.
    const before = [
      { directive: { name: "shop", summarizer: "mine" }, name: "mine", source: "directive" },
      { directive: { name: "browser" }, name: "browser_digest", source: "override" },
      { directive: { name: "shop" }, name: "shop_summarizer", source: "convention" },
    ] as const;
    for (const { directive, name, source } of before) {
      expect(
        selectSummarizer({ directive, continuation: settings, exists: everything, agentDefault }),
      ).toMatchObject({ name, source });
    }
    // A default that does not exist (a space without the built-ins) falls through.
    expect(
      selectSummarizer({
        directive: { name: "shop" },
        continuation: settings,
        exists: nothing,
        agentDefault,
      }),
    ).toMatchObject({ name: "thread_summary", source: "default" });
  });

  it("then summary_directive, with its limit overrides", () => {
    expect(
      selectSummarizer({ directive: { name: "plain" }, continuation: settings, exists: nothing }),
    ).toEqual({
      name: "thread_summary",
      source: "default",
      maxSummaryTokens: 4000,
      resumeCeilingTokens: 16000,
      limits: { maxTurns: 1 },
    });
  });

  it("does not find inherited properties for names like constructor", () => {
    const choice = selectSummarizer({
      directive: { name: "constructor" },
      continuation: continuation(),
      exists: nothing,
    });
    expect(choice).toEqual({
      name: "thread_summary",
      source: "default",
      maxSummaryTokens: 4000,
      resumeCeilingTokens: 16000,
    });
    expect(
      selectSummarizer({
        directive: { name: "x", summarizer: "toString" },
        continuation: continuation(),
        exists: nothing,
      }),
    ).not.toHaveProperty("limits");
  });

  it("returns limits the caller may change without touching the config", () => {
    const choice = selectSummarizer({
      directive: { name: "plain" },
      continuation: settings,
      exists: nothing,
    });
    choice.limits!.maxTurns = 99;
    expect(settings.summaryLimitOverrides.thread_summary).toEqual({ maxTurns: 1 });
  });
});

const conversation: ProviderMessage[] = [
  { role: "user", content: "Find the weather in Paris." },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "secret thoughts", signature: "sig" },
      { type: "redacted-reasoning", data: "opaque" },
      { type: "text", text: "Let me look." },
      {
        type: "tool-call",
        id: "call_1",
        name: "http.fetch",
        input: { url: "https://weather.example/paris" },
        inputText: '{"url":"https://weather.example/paris"}',
      },
      { type: "tool-call", id: "call_2", name: "fs.read", inputText: '{"path": broken' },
    ],
  },
  {
    role: "tool",
    results: [
      { toolCallId: "call_1", name: "http.fetch", output: "18°C, cloudy" },
      { toolCallId: "call_2", output: "invalid arguments", isError: true },
    ],
  },
  {
    role: "user",
    content: [
      { type: "text", text: "And this picture?" },
      { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "refusal", text: "I cannot identify people." },
      { type: "provider", kind: "web_search_tool_result", data: { results: [] } },
    ],
  },
  { role: "assistant", content: [{ type: "reasoning", text: "only thinking" }] },
  { role: "assistant", content: "Done: 18°C in Paris." },
];

const RENDERED = `### User

Find the weather in Paris.

### Assistant

Let me look.

[tool call http.fetch(call_1): {"url":"https://weather.example/paris"}]

[tool call fs.read(call_2): {"path": broken]

### Tool results

[result of call_1: 18°C, cloudy]

[result of call_2 (error): invalid arguments]

### User

And this picture?

[image]

### Assistant

[refusal: I cannot identify people.]

[provider block web_search_tool_result]

### Assistant

Done: 18°C in Paris.`;

describe("renderTranscript", () => {
  it("renders every block kind, leaving reasoning out", () => {
    const text = renderTranscript(conversation);
    expect(text).toBe(RENDERED);
    expect(text).not.toContain("thoughts");
    expect(text).not.toContain("opaque");
    expect(text).not.toContain("only thinking");
    expect(renderTranscript([])).toBe("");
  });

  it("is deterministic", () => {
    const copy = structuredClone(conversation);
    expect(renderTranscript(copy)).toBe(renderTranscript(conversation));
    expect(renderTranscript(conversation, { maxChars: 200 })).toBe(
      renderTranscript(copy, { maxChars: 200 }),
    );
  });

  it("with maxChars keeps the newest whole messages and says how many were left out", () => {
    expect(renderTranscript(conversation, { maxChars: RENDERED.length })).toBe(RENDERED);
    const threeLeftOut = `[transcript shortened: 3 earlier messages left out]

### User

And this picture?

[image]

### Assistant

[refusal: I cannot identify people.]

[provider block web_search_tool_result]

### Assistant

Done: 18°C in Paris.`;
    const fiveLeftOut = `[transcript shortened: 5 earlier messages left out]

### Assistant

Done: 18°C in Paris.`;
    expect(renderTranscript(conversation, { maxChars: RENDERED.length - 1 })).toMatch(
      /^\[transcript shortened: 2 earlier messages left out\]\n\n### Tool results\n\n/,
    );
    expect(renderTranscript(conversation, { maxChars: threeLeftOut.length })).toBe(threeLeftOut);
    expect(renderTranscript(conversation, { maxChars: threeLeftOut.length - 1 })).toMatch(
      /^\[transcript shortened: 4 earlier messages left out\]\n\n### Assistant\n\n\[refusal/,
    );
    expect(renderTranscript(conversation, { maxChars: fiveLeftOut.length })).toBe(fiveLeftOut);
    for (const maxChars of [100, 150, 200, 300, 400]) {
      const text = renderTranscript(conversation, { maxChars });
      expect(text.length).toBeLessThanOrEqual(maxChars);
      expect(text.endsWith("Done: 18°C in Paris.")).toBe(true);
    }
  });

  it("keeps the end of the newest message when not even it fits", () => {
    const long: ProviderMessage[] = [
      { role: "user", content: "first" },
      { role: "assistant", content: `${"a".repeat(500)}THE END` },
    ];
    const text = renderTranscript(long, { maxChars: 120 });
    expect(text.length).toBe(120);
    expect(text).toMatch(
      /^\[transcript shortened: 1 earlier message and the start of the newest one left out\]\n\n### Assistant\n\n…a+THE END$/,
    );
    expect(renderTranscript(long, { maxChars: 10 }).length).toBeLessThanOrEqual(10);
    const emoji: ProviderMessage[] = [{ role: "user", content: "😀".repeat(100) }];
    const cut = renderTranscript(emoji, { maxChars: 101 });
    expect(cut.length).toBeLessThanOrEqual(101);
    expect(cut.endsWith("😀")).toBe(true);
    expect(cut).not.toMatch(/…[\udc00-\udfff]/);
  });
});

describe("renderSummarizerInputs", () => {
  it("is the input record the built-in summarizer accepts", () => {
    const inputs = renderSummarizerInputs({
      transcript: renderTranscript(conversation),
      directiveName: "assistant",
      maxSummaryTokens: 2000,
    });
    expect(inputs).toEqual({
      transcript_content: RENDERED,
      directive_name: "assistant",
      max_summary_tokens: 2000,
    });
    const summarizer = createItemSpace({
      workspace: findBuiltinDir(),
      home: findBuiltinDir(),
      trustedKeys: new Map(),
      env: {},
    }).directive("thread_summary");
    expect(checkInputs(summarizer, inputs)).toEqual(inputs);
  });
});
