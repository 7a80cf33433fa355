import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createFeedEngine,
  DEFAULT_MAX_TOKENS,
  estimateTokens,
  truncateToTokens,
  truncationMarker,
} from "../src/feeds/index.js";
import { fakeExecutor, fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

const MARKER = /^(?:([\s\S]*)\n)?… \[truncated: ([\d,]+) of ([\d,]+) tokens\]$/;

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** True when `text` has no lone surrogate. */
function wellFormed(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (isHigh(code)) {
      if (!isLow(text.charCodeAt(index + 1))) return false;
      index++;
    } else if (isLow(code)) return false;
  }
  return true;
}

describe("estimateTokens", () => {
  it.each([
    ["", 0],
    ["abcd", 1],
    ["abcde", 2],
    ["é", 1], // U+00E9 weighs 1/2
    ["éé", 1],
    ["日本語", 3], // CJK: 1 each
    ["😀", 2], // astral: 2
    ["\ud800", 1], // a lone surrogate: 1
    ["a".repeat(4000), 1000],
  ])("%j costs %i", (text, tokens) => {
    expect(estimateTokens(text)).toBe(tokens);
  });
});

describe("truncateToTokens", () => {
  it("keeps text within the limit (or without one) as it is", () => {
    expect(truncateToTokens("a".repeat(40), 10)).toEqual({
      value: "a".repeat(40),
      truncated: false,
      tokens: 10,
      originalTokens: 10,
    });
    expect(truncateToTokens("a".repeat(400), undefined).truncated).toBe(false);
  });

  it("cuts to max_tokens and appends a visible marker on its own line", () => {
    expect(truncateToTokens("a".repeat(100), 10)).toEqual({
      value: `${"a".repeat(40)}\n… [truncated: 10 of 25 tokens]`,
      truncated: true,
      tokens: 19, // 40 + 1 + 29 ASCII quarters, and 4 for the ellipsis: 74 / 4, rounded up
      originalTokens: 25,
    });
  });

  it("writes the counts with thousands separators", () => {
    expect(truncationMarker(1234, 5678)).toBe("… [truncated: 1,234 of 5,678 tokens]");
    expect(
      truncateToTokens("x".repeat(22_712), 1234).value.endsWith(
        "\n… [truncated: 1,234 of 5,678 tokens]",
      ),
    ).toBe(true);
  });

  it("never splits a surrogate pair", () => {
    expect(truncateToTokens("😀".repeat(10), 3).value).toBe("😀\n… [truncated: 2 of 20 tokens]");
    expect(truncateToTokens("😀😀", 1).value).toBe("… [truncated: 0 of 4 tokens]");
  });

  it("keeps grapheme clusters whole: emoji sequences and combining accents", () => {
    expect(truncateToTokens("ab👨‍👩‍👧cd", 5).value).toBe("ab\n… [truncated: 1 of 9 tokens]");
    expect(truncateToTokens("cafe\u0301 au lait", 1).value).toBe(
      "caf\n… [truncated: 1 of 4 tokens]",
    );
  });

  it("property: never throws, keeps a prefix within max_tokens, and the marker is all it adds", () => {
    const anyUnit = fc.oneof(
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
      fc.constantFrom("\u0301", "\u200d", "👨‍👩‍👧", "e\u0301", "\n", "é", "日"),
    );
    fc.assert(
      fc.property(
        fc.string({ unit: anyUnit, maxLength: 300 }),
        fc.integer({ min: 0, max: 120 }),
        (text, max) => {
          const result = truncateToTokens(text, max);
          expect(result.originalTokens).toBe(estimateTokens(text));
          expect(result.tokens).toBe(estimateTokens(result.value));
          expect(result.truncated).toBe(result.originalTokens > max);
          if (!result.truncated) {
            expect(result.value).toBe(text);
            return;
          }
          const match = MARKER.exec(result.value);
          expect(match).not.toBeNull();
          const kept = match![1] ?? "";
          expect(text.startsWith(kept)).toBe(true);
          expect(estimateTokens(kept)).toBeLessThanOrEqual(max);
          expect(Number(match![2]!.replaceAll(",", ""))).toBe(estimateTokens(kept));
          expect(Number(match![3]!.replaceAll(",", ""))).toBe(result.originalTokens);
          const marker = truncationMarker(estimateTokens(kept), result.originalTokens);
          expect(result.tokens).toBeLessThanOrEqual(max + estimateTokens(`\n${marker}`));
          // The cut is never between the halves of a pair.
          if (kept.length > 0) {
            expect(
              isHigh(kept.charCodeAt(kept.length - 1)) && isLow(text.charCodeAt(kept.length)),
            ).toBe(false);
          }
          if (wellFormed(text)) expect(wellFormed(result.value)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("the engine applies max_tokens", () => {
  async function refreshWith(value: string, maxTokens?: number) {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const engine = createFeedEngine({
      log: log.log,
      executors: [fakeExecutor("relic", () => value)],
      clock: time.clock,
      timers: time.timers,
    });
    await engine.add({
      id: "large_dataset",
      type: "on_demand",
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      source: { type: "relic", name: "data_warehouse" },
    });
    await engine.resolve();
    return log.of("feed.refreshed")[0]!;
  }

  it("records the truncated value, its tokens and truncated: true", async () => {
    const refreshed = await refreshWith("row\n".repeat(2000), 1000);
    // 4,000 kept characters, the newline, 35 ASCII characters of marker, and 4 quarters for the ellipsis
    expect(refreshed).toMatchObject({ truncated: true, tokens: 1010 });
    expect(String(refreshed.value).endsWith("\n… [truncated: 1,000 of 2,000 tokens]")).toBe(true);
  });

  it("uses DEFAULT_MAX_TOKENS (4,000) for a feed that sets none", async () => {
    expect(DEFAULT_MAX_TOKENS).toBe(4000);
    const refreshed = await refreshWith("x".repeat(20_000));
    expect(String(refreshed.value).endsWith("… [truncated: 4,000 of 5,000 tokens]")).toBe(true);
  });
});
