import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arrayLiteral } from "../src/log/postgres/postgres-batch.js";

/** pg's own conversion of a parameter to the text it sends: the reference. */
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as {
  prepareValue(value: unknown): unknown;
};

/** Strings with what array syntax and JSON make special, and plain ones. */
const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.constantFrom('{"text":"say \\"hi\\""}', "back\\slash", "a,b", "{x}", "NULL", "", " ", "é🧵"),
);

describe("PostgreSQL array literals", () => {
  it("are what pg sends for any text, escaped columns", () => {
    fc.assert(
      fc.property(fc.array(fc.option(text, { nil: null }), { maxLength: 20 }), (values) => {
        expect(arrayLiteral(values, false)).toBe(prepareValue(values));
      }),
      { numRuns: 2_000 },
    );
  });

  it("are what pg sends for plain columns, whose values hold no quote or backslash", () => {
    const plain = fc.stringMatching(/^[A-Za-z0-9._:@+-]{1,30}$/);
    fc.assert(
      fc.property(fc.array(fc.option(plain, { nil: null }), { maxLength: 20 }), (values) => {
        expect(arrayLiteral(values, true)).toBe(prepareValue(values));
      }),
      { numRuns: 1_000 },
    );
  });
});
