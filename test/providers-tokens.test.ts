import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { createModelCatalogue } from "../src/providers/models/index.js";
import {
  applyObservation,
  type CalibrationObservation,
  calibrationFrom,
  calibrationReducer,
  createTokenEstimator,
  DEFAULT_CHARS_PER_TOKEN,
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  REQUEST_OVERHEAD_TOKENS,
} from "../src/providers/tokens/index.js";

const TEXT =
  "Spool keeps one continuity log per agent. 日本語のテキストも数える。 Émojis 🎉 and code: `const x = 1;`\n".repeat(
    20,
  );

describe("counting with a real tokenizer", () => {
  it("matches gpt-tokenizer for OpenAI models, snapshots included", () => {
    const estimator = createTokenEstimator();
    expect(estimator.count("gpt-4o", TEXT)).toBe(o200k(TEXT));
    expect(estimator.count("gpt-4o-2024-08-06", TEXT)).toBe(o200k(TEXT));
    expect(estimator.estimate("gpt-4.1", TEXT)).toBe(o200k(TEXT));
    expect(estimator.count("gpt-4o", "")).toBe(0);
  });

  it("uses the tokenizer the catalogue names", () => {
    const catalogue = createModelCatalogue({
      "legacy-gpt": {
        provider: "openai",
        format: "openai-chat",
        contextWindow: 8_192,
        maxOutputTokens: 4_096,
        pricing: { inputPerMTok: 30, outputPerMTok: 60 },
        tokenizer: "cl100k_base",
      },
    });
    const estimator = createTokenEstimator({ catalogue });
    expect(estimator.count("legacy-gpt", TEXT)).toBe(cl100k(TEXT));
    expect(cl100k(TEXT)).not.toBe(o200k(TEXT));
  });

  it("counts special-token text as plain text instead of throwing", () => {
    const estimator = createTokenEstimator();
    expect(estimator.count("gpt-4o", "a <|endoftext|> b")).toBeGreaterThan(3);
  });
});

describe("estimating without a tokenizer", () => {
  it("divides characters by the maker's ratio (3.5 for Claude)", () => {
    const estimator = createTokenEstimator();
    expect(estimator.count("claude-sonnet-4-5", "x".repeat(350))).toBe(100);
    expect(estimator.count("deepseek-chat", "x".repeat(380))).toBe(100);
  });

  it("falls back to the default ratio for an unknown model", () => {
    const estimator = createTokenEstimator();
    expect(DEFAULT_CHARS_PER_TOKEN).toBe(3.5);
    expect(estimator.estimate("some-local-model", "x".repeat(700))).toBe(200);
  });

  it("adds per-message overhead, images and tool schemas to a request", () => {
    const estimator = createTokenEstimator();
    const count = (text: string) => estimator.count("claude-haiku-4-5", text);
    const tool = {
      name: "search",
      description: "Searches the web",
      inputSchema: { type: "object", properties: { q: { type: "string" } } },
    };
    const estimate = estimator.estimate("claude-haiku-4-5", {
      system: "You are Spool.",
      messages: [
        { role: "user", content: "hello there" },
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image", mediaType: "image/png", data: "AAAA" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "calling" },
            {
              type: "tool-call",
              id: "t1",
              name: "search",
              inputText: '{"q":"x"}',
              input: { q: "x" },
            },
          ],
        },
        { role: "tool", results: [{ toolCallId: "t1", output: "result text" }] },
      ],
      tools: [tool],
    });
    const expected =
      REQUEST_OVERHEAD_TOKENS +
      count("You are Spool.") +
      MESSAGE_OVERHEAD_TOKENS +
      4 * MESSAGE_OVERHEAD_TOKENS +
      count("hello there") +
      count("look") +
      IMAGE_TOKENS +
      count("calling") +
      count("search") +
      count('{"q":"x"}') +
      MESSAGE_OVERHEAD_TOKENS +
      count("result text") +
      count("t1") +
      MESSAGE_OVERHEAD_TOKENS +
      MESSAGE_OVERHEAD_TOKENS +
      count(JSON.stringify(tool));
    expect(estimate).toBe(expected);
  });
});

describe("calibration", () => {
  const model = "claude-sonnet-4-5";
  const text = "y".repeat(35_000); // 10,000 raw tokens

  it("converges on the ratio providers report", () => {
    const estimator = createTokenEstimator();
    const raw = estimator.estimate(model, text);
    expect(raw).toBe(10_000);
    const reported = Math.round(raw * 1.3);
    const errors: number[] = [];
    for (let i = 0; i < 12; i++) {
      const estimate = estimator.estimate(model, text);
      errors.push(Math.abs(estimate / reported - 1));
      estimator.observe(model, estimate, reported);
    }
    for (let i = 1; i < errors.length; i++) expect(errors[i]).toBeLessThan(errors[i - 1]!);
    expect(Math.abs(estimator.estimate(model, text) / reported - 1)).toBeLessThan(0.05);
    expect(estimator.factor("claude-sonnet-4-5-20250929")).toBeCloseTo(1.3, 1);
  });

  it("is bounded against a single absurd observation", () => {
    const estimator = createTokenEstimator();
    for (let i = 0; i < 20; i++) {
      estimator.observe(model, estimator.estimate(model, text), 10_000);
    }
    const before = estimator.estimate(model, text);
    estimator.observe(model, before, 1_000_000_000);
    const after = estimator.estimate(model, text);
    expect(after / before).toBeLessThanOrEqual(2 ** 0.25 + 0.001);
    estimator.observe(model, after, 0);
    estimator.observe(model, after, Number.NaN);
    expect(estimator.estimate(model, text)).toBe(after);
  });

  it("keeps models apart and keys snapshots by their catalogue id", () => {
    const estimator = createTokenEstimator();
    estimator.observe("claude-sonnet-4-5-20250929", 100, 200);
    expect(estimator.factor("claude-sonnet-4-5")).toBeGreaterThan(1);
    expect(estimator.factor("claude-haiku-4-5")).toBe(1);
    expect(Object.keys(estimator.calibration())).toEqual(["claude-sonnet-4-5"]);
  });

  it("calibrates models with a tokenizer too (message framing the tokenizer does not see)", () => {
    const estimator = createTokenEstimator();
    const exact = estimator.estimate("gpt-4o", TEXT);
    estimator.observe("gpt-4o", exact, exact * 1.1);
    expect(estimator.estimate("gpt-4o", TEXT)).toBeGreaterThan(exact);
    expect(estimator.count("gpt-4o", TEXT)).toBe(exact);
  });

  it("rebuilds from logged observations: replay, calibrationFrom and the reducer agree", () => {
    const observations: CalibrationObservation[] = [];
    const live = createTokenEstimator();
    for (let i = 0; i < 8; i++) {
      const estimate = live.estimate(model, text);
      const reported = 12_000 + i * 100;
      live.observe(model, estimate, reported);
      observations.push({ model, estimate, reported });
    }
    const replayed = createTokenEstimator();
    replayed.replay(observations);
    expect(replayed.calibration()).toEqual(live.calibration());
    expect(calibrationFrom(observations)).toEqual(live.calibration());
    const folded = observations.reduce(calibrationReducer.reduce, calibrationReducer.initial());
    expect(folded).toEqual(live.calibration());
    const restored = createTokenEstimator({ calibration: live.calibration() });
    expect(restored.estimate(model, text)).toBe(live.estimate(model, text));
  });

  it("applyObservation leaves the given state unchanged", () => {
    const state = Object.freeze({});
    const next = applyObservation(state, { model: "m", estimate: 100, reported: 150 });
    expect(state).toEqual({});
    expect(next.m?.observations).toBe(1);
  });
});
