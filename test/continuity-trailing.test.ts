import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ContextMessage, selectTrailing, unitStart } from "../src/continuity/index.js";
import { createModelCatalogue } from "../src/providers/models/index.js";
import { createTokenEstimator } from "../src/providers/tokens/index.js";
import { HistoryBuilder, newestTurnOf, viewArbitrary } from "./support/context-histories.js";

const MODEL = "claude-sonnet-4-5";
const estimator = createTokenEstimator({ catalogue: createModelCatalogue() });
const empty = estimator.raw(MODEL, { messages: [] });
/** Tokens of one message, as the handoff counts them. */
const cost = (entry: ContextMessage) => estimator.raw(MODEL, { messages: [entry.message] }) - empty;
const sum = (entries: readonly ContextMessage[]) => entries.reduce((n, e) => n + cost(e), 0);

/** turn(40) · step with a call and results text · step (text results) · turn(20) · step · step. */
function sample(): ContextMessage[] {
  const builder = new HistoryBuilder();
  builder.add({ kind: "turn", words: 40 });
  builder.add({ kind: "step", words: 60, calls: 2, results: "tool+text", outputWords: 80 });
  builder.add({ kind: "step", words: 30, calls: 0, results: "text", outputWords: 10 });
  builder.add({ kind: "turn", words: 20 });
  builder.add({ kind: "step", words: 50, calls: 1, results: "tool", outputWords: 200 });
  builder.add({ kind: "step", words: 30, calls: 0, results: "none", outputWords: 0 });
  return builder.messages;
}
// Indexes: 0 turn · 1 assistant(calls) 2 tool 3 results · 4 assistant 5 results · 6 turn ·
// 7 assistant(call) 8 tool · 9 assistant.

describe("selectTrailing: examples", () => {
  it("carries the whole thread when it fits", () => {
    const messages = sample();
    const selected = selectTrailing(messages, 6, 100_000, cost);
    expect(selected.messages).toEqual(messages);
    expect(selected.tokens).toBe(sum(messages));
    expect(selected.fromSeq).toBe(messages[0]!.seq);
  });

  it("starts the tail at a user message, never at an assistant message or a tool result", () => {
    const messages = sample();
    // Room for everything from the assistant message at 4, not for the results at 3 before it.
    const ceiling = sum(messages.slice(4));
    const selected = selectTrailing(messages, 6, ceiling, cost);
    expect(selected.messages).toEqual(messages.slice(5));
    expect(selected.messages[0]!.message.role).toBe("user");
    expect(selected.tokens).toBe(sum(messages.slice(5)));
    expect(selected.fromSeq).toBe(messages[5]!.seq);
  });

  it("keeps a tool call with its results: neither when both do not fit", () => {
    const messages = sample();
    // Room for the tool results at 8 and the answer at 9, not for the call at 7 with them.
    const ceiling = sum(messages.slice(8)) + cost(messages[6]!);
    const selected = selectTrailing(messages, 6, ceiling, cost);
    expect(selected.messages).toEqual([messages[6]!]);
    expect(selected.messages.some((entry) => entry.message.role === "tool")).toBe(false);
  });

  it("carries the newest turn first, on its own, when it is older than the tail", () => {
    const messages = sample();
    const tail = messages.slice(9);
    const selected = selectTrailing(messages, 6, sum(tail) + cost(messages[6]!), cost);
    // The answer at 9 is an assistant message: the tail must start at a user message, so only
    // the turn is carried; with a user message last, it comes after the turn.
    expect(selected.messages).toEqual([messages[6]!]);
    const withResults = [...messages.slice(0, 9), messages[5]!, messages[9]!].map((entry, i) => ({
      ...entry,
      seq: i + 1,
    }));
    // 9 is now a user message of results, 10 the answer.
    const chosen = selectTrailing(
      withResults,
      6,
      sum(withResults.slice(9)) + cost(withResults[6]!),
      cost,
    );
    expect(chosen.messages).toEqual([withResults[6]!, ...withResults.slice(9)]);
    expect(chosen.tokens).toBe(sum(chosen.messages));
    expect(chosen.fromSeq).toBe(10);
  });

  it("reserves room for the newest turn before taking older messages", () => {
    const messages = sample();
    // Exactly the tail from the turn: the turn is inside it, so nothing is reserved twice.
    const exact = selectTrailing(messages, 6, sum(messages.slice(6)), cost);
    expect(exact.messages).toEqual(messages.slice(6));
    // One token less: the tail without the turn would fit, but not with the turn carried first.
    const less = selectTrailing(messages, 6, sum(messages.slice(6)) - 1, cost);
    expect(less.messages).toEqual([messages[6]!]);
    expect(less.tokens).toBeLessThanOrEqual(sum(messages.slice(6)) - 1);
  });

  it("carries a newest turn larger than the ceiling on its own, verbatim", () => {
    const messages = sample();
    const selected = selectTrailing(messages, 6, 5, cost);
    expect(selected.messages).toEqual([messages[6]!]);
    expect(selected.tokens).toBe(cost(messages[6]!));
    expect(selected.fromSeq).toBe(messages[9]!.seq + 1);
  });

  it("selects nothing from nothing", () => {
    expect(selectTrailing([], -1, 1000, cost)).toEqual({ messages: [], tokens: 0, fromSeq: 1 });
  });
});

describe("selectTrailing: properties", () => {
  it("is a contiguous tail from a user message, whole units, within the ceiling, with the newest turn", () => {
    fc.assert(
      fc.property(
        viewArbitrary(30),
        fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 300, max: 30_000 })),
        fc.boolean(),
        (view, ceiling, withTurn) => {
          const { messages } = view;
          const newestTurn = withTurn ? view.newestTurn : -1;
          const selected = selectTrailing(messages, newestTurn, ceiling, cost);
          const turn = newestTurn >= 0 ? messages[newestTurn]! : undefined;

          // The newest turn is always carried, once, and first when it is not in the tail (the
          // selection is then not a contiguous tail of the thread, or the turn alone is over
          // the ceiling).
          const offset = messages.length - selected.messages.length;
          const contiguous = selected.messages.every((e, i) => e === messages[offset + i]);
          const separate =
            turn !== undefined &&
            selected.messages[0] === turn &&
            (!contiguous || cost(turn) > ceiling);
          const tail = separate ? selected.messages.slice(1) : selected.messages;
          if (turn) {
            expect(selected.messages.filter((entry) => entry === turn)).toHaveLength(1);
            expect(separate || tail.includes(turn)).toBe(true);
          }
          const from = messages.length - tail.length;
          if (separate && tail.length > 0) expect(newestTurn).toBeLessThan(from);

          // A contiguous tail that starts at a user message, so no tool result without its call.
          expect(tail).toEqual(messages.slice(from));
          tail.forEach((entry, index) => {
            expect(entry).toBe(messages[from + index]);
          });
          if (tail.length > 0) expect(tail[0]!.message.role).toBe("user");
          tail.forEach((entry, index) => {
            if (entry.message.role === "tool") {
              expect(tail[index - 1]?.message.role).toBe("assistant");
            }
          });

          // Its tokens, the ceiling (only a newest turn larger than it goes over), and fromSeq.
          expect(selected.tokens).toBe(sum(selected.messages));
          if (selected.tokens > ceiling) {
            expect(selected.messages).toEqual([turn]);
            expect(cost(turn!)).toBeGreaterThan(ceiling);
          }
          expect(selected.fromSeq).toBe(tail[0]?.seq ?? (messages.at(-1)?.seq ?? 0) + 1);

          // The newest: going back to the previous user message would not fit.
          let previous = from - 1;
          while (
            previous >= 0 &&
            (messages[previous]!.message.role !== "user" ||
              unitStart(messages, previous) !== previous)
          ) {
            previous--;
          }
          if (previous >= 0) {
            const extended = messages.slice(previous);
            const carried = turn && newestTurn < previous ? [turn] : [];
            expect(sum([...carried, ...extended])).toBeGreaterThan(ceiling);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("agrees with the newest turn the history gives", () => {
    fc.assert(
      fc.property(viewArbitrary(20), fc.integer({ min: 0, max: 5000 }), (view, ceiling) => {
        expect(view.newestTurn).toBe(newestTurnOf(view.messages));
        const selected = selectTrailing(view.messages, view.newestTurn, ceiling, cost);
        expect(selected.messages).toContain(view.messages[view.newestTurn]);
      }),
      { numRuns: 100 },
    );
  });
});
