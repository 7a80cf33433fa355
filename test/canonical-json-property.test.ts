import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/spec/index.js";

/** The definition, written the slow and obvious way: sorted keys at every depth. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${reference(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("canonical JSON (property)", () => {
  it("equals the reference for any JSON value, whatever the key order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 2000 },
    );
  });

  it("does not depend on insertion order or on a JSON round trip", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(record));
        expect(canonicalJson(JSON.parse(JSON.stringify(record)))).toBe(canonicalJson(record));
      }),
      { numRuns: 1000 },
    );
  });

  it("gives the same text with a memo, first encoded or reused, parts shared or not", () => {
    const memo = new WeakMap<object, string>();
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 4 }), (parts) => {
        // The same part objects inside two containers: the second encoding reuses the memo.
        const first = { parts, again: parts };
        const second = [parts, { parts }];
        expect(canonicalJson(first, memo)).toBe(reference(first));
        expect(canonicalJson(second, memo)).toBe(reference(second));
        expect(canonicalJson(first, memo)).toBe(canonicalJson(first));
      }),
      { numRuns: 1000 },
    );
  });
});
