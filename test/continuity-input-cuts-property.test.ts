/**
 * `planInputCuts` over random thread views (fast-check): every own input over the limit is cut,
 * nothing under it is, each cut text (excerpt and note) fits the limit and starts with the input,
 * carried messages are left alone, and the plan is deterministic.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageTokens, textTokens } from "../src/continuity/context-compiler.js";
import { cutInputText, planInputCuts } from "../src/continuity/index.js";
import { createModelCatalogue } from "../src/providers/models/index.js";
import { createTokenEstimator } from "../src/providers/tokens/index.js";
import { viewArbitrary } from "./support/context-histories.js";

const model = "claude-sonnet-4-5";
const estimator = createTokenEstimator({ catalogue: createModelCatalogue() });
const counts = {
  message: messageTokens(estimator, model),
  text: (text: string) => textTokens(estimator, model, text),
};

describe("cutting inputs too long for the context", () => {
  it("cuts exactly the own inputs over the limit, each to a text within it", () => {
    let planned = 0;
    fc.assert(
      fc.property(viewArbitrary(30), fc.integer({ min: 256, max: 4000 }), (view, limit) => {
        const cuts = planInputCuts(view, limit, counts);
        planned += cuts.length;
        expect(planInputCuts(view, limit, counts)).toEqual(cuts);
        const expected: string[] = [];
        for (const entry of view.messages) {
          if (entry.thread !== undefined) continue;
          const { message } = entry;
          if (message.role === "user" && typeof message.content === "string") {
            if (counts.text(message.content) > limit) expected.push(`${entry.seq}:user`);
          } else if (message.role === "tool") {
            for (const result of message.results) {
              if (counts.text(result.output) > limit) {
                expected.push(`${entry.seq}:tool:${result.toolCallId}`);
              }
            }
          }
        }
        expect(
          cuts.map((cut) => [cut.seq, cut.role, cut.toolCallId].filter(Boolean).join(":")),
        ).toEqual(expected);
        for (const cut of cuts) {
          const text = cutInputText(cut.text, {
            chars: cut.text.length,
            keptChars: cut.keptChars,
            tokens: cut.tokens,
            limit: cut.limit,
            hash: "a".repeat(64),
          });
          expect(counts.text(text)).toBeLessThanOrEqual(limit);
          expect(text.startsWith(cut.text.slice(0, cut.keptChars))).toBe(true);
          expect(cut.keptChars).toBeGreaterThan(0);
        }
      }),
      { numRuns: 200 },
    );
    expect(planned).toBeGreaterThan(0);
  });
});
