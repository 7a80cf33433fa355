/**
 * `planInputCuts` over random thread views (fast-check): every own input over the limit is cut,
 * nothing under it is, each cut text (excerpt and note) fits the limit and starts with the input,
 * carried messages are left alone, the plan is deterministic, and a view whose cuts were applied
 * is never cut again at the same limit.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageTokens, textTokens } from "../src/continuity/context-compiler.js";
import {
  type ContextMessage,
  cutInputText,
  planInputCuts,
  type ThreadView,
} from "../src/continuity/index.js";
import { createModelCatalogue } from "../src/providers/models/index.js";
import { createTokenEstimator } from "../src/providers/tokens/index.js";
import { viewArbitrary } from "./support/context-histories.js";

const estimator = createTokenEstimator({ catalogue: createModelCatalogue() });
/** Token counts for `model`, each `drift` times the estimate (its calibration moved). */
const countsFor = (model: string, drift = 1) => ({
  message: (entry: ContextMessage) => Math.ceil(messageTokens(estimator, model)(entry) * drift),
  text: (text: string) => Math.ceil(textTokens(estimator, model, text) * drift),
});

describe("cutting inputs too long for the context", () => {
  it("cuts exactly the own inputs over the limit, each to a text within it", () => {
    let planned = 0;
    fc.assert(
      // One model estimated by characters, one with a real tokenizer (where hex counts apart).
      fc.property(
        viewArbitrary(30),
        fc.integer({ min: 256, max: 4000 }),
        fc.constantFrom("claude-sonnet-4-5", "gpt-4.1"),
        (view, limit, model) => {
          const counts = countsFor(model);
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
          const cutTexts = new Map<string, string>();
          for (const cut of cuts) {
            // The note names the artifact the log stores the input as (its sha256).
            const text = cutInputText(cut.text, {
              chars: cut.text.length,
              keptChars: cut.keptChars,
              tokens: cut.tokens,
              limit: cut.limit,
              hash: createHash("sha256").update(cut.text, "utf8").digest("hex"),
            });
            expect(counts.text(text)).toBeLessThanOrEqual(limit);
            expect(text.startsWith(cut.text.slice(0, cut.keptChars))).toBe(true);
            expect(cut.keptChars).toBeGreaterThan(0);
            cutTexts.set(`${cut.seq}:${cut.toolCallId ?? ""}`, text);
          }
          // A cut message is within the limit: the next compile at this limit cuts nothing again,
          // even once the estimate drifted a tenth up.
          const applied = applyCuts(view, cutTexts);
          expect(planInputCuts(applied, limit, counts)).toEqual([]);
          const again = planInputCuts(applied, limit, countsFor(model, 1.1)).filter((cut) =>
            cutTexts.has(`${cut.seq}:${cut.toolCallId ?? ""}`),
          );
          expect(again).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
    expect(planned).toBeGreaterThan(0);
  });
});

/** `view` with each cut input replaced by its cut text (by `seq:toolCallId`). */
function applyCuts(view: ThreadView, texts: Map<string, string>): ThreadView {
  const messages = view.messages.map((entry) => {
    const { message } = entry;
    if (message.role === "user" && typeof message.content === "string") {
      const text = texts.get(`${entry.seq}:`);
      return text === undefined ? entry : { ...entry, message: { ...message, content: text } };
    }
    if (message.role !== "tool") return entry;
    const results = message.results.map((result) => {
      const text = texts.get(`${entry.seq}:${result.toolCallId}`);
      return text === undefined ? result : { ...result, output: text };
    });
    return { ...entry, message: { ...message, results } };
  });
  return { ...view, messages };
}
