import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EVENT_CATALOG, eventSpec } from "../src/spec/index.js";

/** Data near what the fast checks look at, and garbage. */
const value = fc.oneof(
  fc.string({ maxLength: 70 }),
  fc.constantFrom("", "x".repeat(64), "x".repeat(65), "🧵".repeat(32), "🧵".repeat(33)),
  fc.integer(),
  fc.constantFrom(null, undefined, true, [], {}, [1, 2]),
);
const data = fc.oneof(
  fc.record({ block: value, text: value }),
  fc.record({ block: value, text: value, deltas: fc.oneof(value, fc.array(fc.nat())) }),
  fc.record({ block: value, text: value }, { requiredKeys: [] }),
  fc.dictionary(fc.constantFrom("block", "text", "other", "__proto__"), value),
  fc.constantFrom(null, "text", 3, [], Object.create({ block: "b", text: "t" })),
  fc.constant(Object.assign(Object.create(null), { block: "b", text: "t" })),
);

const fastTypes = Object.keys(EVENT_CATALOG).filter((type) => eventSpec(type)?.fastData);

describe("fast data checks", () => {
  it("exist where the append path needs them", () => {
    expect(fastTypes).toContain("token.delta");
  });

  it.each(fastTypes)("%s: accepts only what its schema accepts, with an equal result", (type) => {
    const spec = eventSpec(type)!;
    let accepted = 0;
    fc.assert(
      fc.property(data, (input) => {
        const fast = spec.fastData!(input);
        if (fast === undefined) return;
        accepted += 1;
        const parsed = spec.schema.safeParse(input);
        expect(parsed.success).toBe(true);
        expect(fast).toStrictEqual(parsed.data);
        // A copy: the caller's object may change after append returns.
        expect(fast).not.toBe(input);
      }),
      { numRuns: 3_000 },
    );
    expect(accepted).toBeGreaterThan(50);
  });
});
