import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { EVENT_CATALOG, eventSpec } from "../src/spec/index.js";

/** Data near what the fast checks look at, and garbage. */
const value = fc.oneof(
  fc.string({ maxLength: 70 }),
  fc.constantFrom("", "x".repeat(64), "x".repeat(65), "🧵".repeat(32), "🧵".repeat(33)),
  fc.integer(),
  fc.constantFrom(null, undefined, true, [], {}, [1, 2]),
);
const deltaData = fc.oneof(
  fc.record({ block: value, text: value }),
  fc.record({ block: value, text: value, deltas: fc.oneof(value, fc.array(fc.nat())) }),
  fc.record({ block: value, text: value }, { requiredKeys: [] }),
  fc.dictionary(fc.constantFrom("block", "text", "other", "__proto__"), value),
  fc.constantFrom(null, "text", 3, [], Object.create({ block: "b", text: "t" })),
  fc.constant(Object.assign(Object.create(null), { block: "b", text: "t" })),
);

/** What the arbitrary reads of a zod v4 schema's definition. */
interface Def {
  type: string;
  checks?: {
    _zod: { def: { check: string; minimum?: number; maximum?: number; pattern?: RegExp } };
  }[];
  shape?: Record<string, { _zod: { def: Def } }>;
  innerType?: { _zod: { def: Def } };
  element?: { _zod: { def: Def } };
  options?: { _zod: { def: Def } }[];
  values?: unknown[];
  entries?: Record<string, unknown>;
  valueType?: { _zod: { def: Def } };
}

const garbage = fc.oneof(
  fc.constantFrom(null, undefined, true, 0, -1, 1.5, Number.NaN, Infinity, "", [], {}),
  fc.string({ maxLength: 8 }),
);

/**
 * Data shaped by a schema's definition: mostly valid (bounds, patterns, enums), sometimes off by
 * one (a string too long, a key missing or extra, a wrong type), so both sides of every check
 * are exercised.
 */
function near(def: Def, depth = 0): fc.Arbitrary<unknown> {
  const valid = shaped(def, depth);
  return fc.oneof({ weight: 40, arbitrary: valid }, { weight: 1, arbitrary: garbage });
}

function shaped(def: Def, depth: number): fc.Arbitrary<unknown> {
  const checks = (def.checks ?? []).map((check) => check._zod.def);
  const min = checks.find((c) => c.check === "min_length")?.minimum ?? 0;
  const max = Math.min(checks.find((c) => c.check === "max_length")?.maximum ?? 12, 1_000_000);
  switch (def.type) {
    case "string": {
      const pattern = checks.find((c) => c.pattern)?.pattern;
      const bound = checks.find((c) => c.check === "max_length")?.maximum;
      // A pattern's strings are cut to the bound (and one past it), never filtered: a filter
      // that rejects most of them would never end.
      if (pattern) {
        return fc
          .stringMatching(pattern)
          .map((text) => (bound === undefined ? text : text.slice(0, bound + 1)));
      }
      return fc.oneof(
        {
          weight: 20,
          arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, min + 12) }),
        },
        {
          weight: 1,
          arbitrary: fc.string({
            minLength: Math.max(0, min - 1),
            maxLength: Math.min(max + 1, min + 12),
          }),
        },
        // One past the bound, and at it.
        { weight: 1, arbitrary: fc.constantFrom("x".repeat(max + 1), "x".repeat(max)) },
      );
    }
    case "number":
      return fc.oneof(
        { weight: 20, arbitrary: fc.nat({ max: 1_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: -3, max: -1 }) },
        { weight: 1, arbitrary: fc.double({ min: -2, max: 2 }) },
      );
    case "boolean":
      return fc.boolean();
    case "literal":
      return fc.constantFrom(...(def.values ?? [null]));
    case "enum":
      return fc.constantFrom(...Object.values(def.entries ?? { x: "x" }));
    case "unknown":
    case "any":
      return fc.jsonValue({ maxDepth: 2 });
    case "optional":
      return fc.option(near(def.innerType!._zod.def, depth), { nil: undefined });
    case "nullable":
      return fc.option(near(def.innerType!._zod.def, depth), { nil: null });
    case "array":
      return depth > 3
        ? fc.constant([])
        : fc.array(near(def.element!._zod.def, depth + 1), { maxLength: Math.min(max + 1, 3) });
    case "record":
      return fc.dictionary(fc.string({ maxLength: 6 }), near(def.valueType!._zod.def, depth + 1), {
        maxKeys: 3,
      });
    case "union":
      return fc.oneof(...(def.options ?? []).map((option) => shaped(option._zod.def, depth)));
    case "object": {
      const shape = Object.fromEntries(
        Object.entries(def.shape ?? {}).map(([key, field]) => [
          key,
          depth > 3 ? fc.constant(undefined) : near(field._zod.def, depth + 1),
        ]),
      );
      const required = Object.entries(def.shape ?? {})
        .filter(([, field]) => field._zod.def.type !== "optional")
        .map(([key]) => key);
      return fc.oneof(
        { weight: 30, arbitrary: fc.record(shape, { requiredKeys: required }) },
        { weight: 1, arbitrary: fc.record(shape, { requiredKeys: [] }) },
        {
          weight: 1,
          arbitrary: fc
            .record(shape, { requiredKeys: required })
            .map((object) => ({ ...object, extra: 1 })),
        },
      );
    }
    default:
      return garbage;
  }
}

const fastTypes = Object.keys(EVENT_CATALOG).filter((type) => eventSpec(type)?.fastData);

describe("fast data checks", () => {
  it("exist where the append path needs them", () => {
    for (const type of ["token.delta", "step.started", "step.completed", "loop.decided"]) {
      expect(fastTypes).toContain(type);
    }
    expect(fastTypes).toContain("context.compiled");
    expect(fastTypes).toContain("message.completed");
    expect(fastTypes).toContain("action.succeeded");
  });

  it.each(fastTypes)("%s: accepts only what its schema accepts, with an equal result", (type) => {
    const spec = eventSpec(type)!;
    const schema = spec.schema as z.ZodType & { _zod: { def: Def } };
    const arbitrary = type === "token.delta" ? deltaData : near(schema._zod.def);
    let accepted = 0;
    fc.assert(
      fc.property(arbitrary, (input) => {
        const fast = spec.fastData!(input);
        const parsed = schema.safeParse(input);
        if (fast === undefined) return;
        accepted += 1;
        expect(parsed.success).toBe(true);
        expect(fast).toStrictEqual(parsed.data);
        // A copy: the caller's object may change after append returns.
        expect(fast).not.toBe(input);
      }),
      // Enough runs that the rarest valid shapes (a few in a hundred) are drawn more than 5 times.
      { numRuns: type === "token.delta" ? 3_000 : 1_200 },
    );
    expect(accepted).toBeGreaterThan(type === "token.delta" ? 50 : 5);
  });
});
