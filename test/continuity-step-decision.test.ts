/**
 * The continuity's step decisions are pure functions of a thread's pressure state and the step
 * (`afterStepDecision`, `beforeStepDecision`): the same inputs always decide the same, which is
 * what lets replay run them again. Checked over random inputs against the rules they state.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  afterHandoffAttempt,
  afterStepDecision,
  beforeStepDecision,
  INITIAL_PRESSURE_STATE,
  stepPressure,
} from "../src/continuity/index.js";

const DECISIONS = ["continue", "complete", "fail", "cancel", "limit", "retry"] as const;
const WINDOW = 10_000;

const inputArbitrary = fc.record({
  state: fc.record({ attempt: fc.nat(5), retryAtStep: fc.nat(20) }),
  inputTokens: fc.nat(20_000),
  bundleTokens: fc.nat(20_000),
  omitted: fc.oneof(fc.constant(0), fc.nat(30)),
  overBudget: fc.boolean(),
  nextStep: fc.nat(30),
  decision: fc.constantFrom(...DECISIONS),
  trigger: fc.double({ min: 0.5, max: 0.95, noNaN: true }),
  mayHandOff: fc.boolean(),
});

describe("continuity step decisions", () => {
  it("hand off after a step exactly when the rules say, with the reason that applies", () => {
    fc.assert(
      fc.property(inputArbitrary, (input) => {
        const pressure = stepPressure(
          { inputTokens: input.inputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
          { tokens: input.bundleTokens },
          WINDOW,
        );
        const bundle = { omitted: input.omitted, overBudget: input.overBudget };
        const decided = afterStepDecision(input.state, { ...input, pressure, bundle });
        const full = input.omitted > 0 || input.overBudget;
        const expected =
          input.mayHandOff &&
          input.nextStep >= 2 &&
          input.nextStep >= input.state.retryAtStep &&
          (pressure.ratio >= input.trigger || full) &&
          input.decision !== "cancel" &&
          input.decision !== "limit";
        expect(decided.kind).toBe(expected ? "handoff" : "none");
        if (decided.kind === "handoff") {
          expect(decided.reason).toMatch(full ? /window is full/ : /reached the trigger/);
        }
        // Pure: the same inputs decide the same.
        expect(afterStepDecision(input.state, { ...input, pressure, bundle })).toEqual(decided);
      }),
    );
  });

  it("measures pressure from the provider's report, or from the compile when there is none", () => {
    const reported = stepPressure(
      { inputTokens: 9_000, cacheReadTokens: 500, cacheWriteTokens: 0 },
      { tokens: 1 },
      WINDOW,
    );
    expect(reported).toEqual({ tokensUsed: 9_500, ratio: 0.9, window: 10_000, estimated: false });
    const estimated = stepPressure(
      { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { tokens: 8_123 },
      WINDOW,
    );
    expect(estimated).toEqual({
      tokensUsed: 8_123,
      ratio: 0.8123,
      window: 10_000,
      estimated: true,
    });
  });

  it("hand off before a step only when its compile would leave messages out", () => {
    const full = { omitted: 3, overBudget: false };
    expect(beforeStepDecision({ bundle: full, nextStep: 1, mayHandOff: true })).toEqual({
      kind: "handoff",
      reason: "the context window is full (3 older messages would not fit)",
    });
    expect(beforeStepDecision({ bundle: full, nextStep: 0, mayHandOff: true }).kind).toBe("none");
    expect(beforeStepDecision({ bundle: full, nextStep: 4, mayHandOff: false }).kind).toBe("none");
    const fits = { omitted: 0, overBudget: false };
    expect(beforeStepDecision({ bundle: fits, nextStep: 4, mayHandOff: true }).kind).toBe("none");
  });

  it("a deferred handoff waits for its retry step; a done one starts the state over", () => {
    const deferred = afterHandoffAttempt(
      { attempt: 1, retryAtStep: 0 },
      { kind: "deferred", retryAtStep: 7 },
    );
    expect(deferred).toEqual({ attempt: 1, retryAtStep: 7 });
    const pressure = { tokensUsed: 9_900, ratio: 0.99, window: 10_000, estimated: false };
    const step = (nextStep: number) =>
      afterStepDecision(deferred, {
        pressure,
        bundle: { omitted: 0, overBudget: false },
        nextStep,
        decision: "continue",
        trigger: 0.8,
        mayHandOff: true,
      }).kind;
    expect(step(6)).toBe("none");
    expect(step(7)).toBe("handoff");
    expect(afterHandoffAttempt(deferred, { kind: "done" })).toEqual(INITIAL_PRESSURE_STATE);
  });
});
