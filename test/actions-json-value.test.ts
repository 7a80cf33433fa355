import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toJsonValue } from "../src/actions/json-value.js";

describe("toJsonValue: what an action's output becomes in the log", () => {
  it("keeps a cyclic object, with the reference back replaced by a marker", () => {
    const node: Record<string, unknown> = { name: "root", items: [1, 2] };
    node.self = node;
    (node.items as unknown[]).push({ parent: node });
    expect(toJsonValue(node)).toEqual({
      name: "root",
      items: [1, 2, { parent: "[Circular]" }],
      self: "[Circular]",
    });
  });

  it("does not mistake a shared (acyclic) reference for a cycle", () => {
    const shared = { id: 7 };
    expect(toJsonValue({ a: shared, b: [shared, shared] })).toEqual({
      a: { id: 7 },
      b: [{ id: 7 }, { id: 7 }],
    });
  });

  it("writes bigints as strings, applies toJSON, and nulls what JSON has no form for", () => {
    expect(toJsonValue(10n)).toBe("10");
    expect(toJsonValue({ n: 2n ** 70n })).toEqual({ n: "1180591620717411303424" });
    expect(toJsonValue({ when: new Date(0) })).toEqual({ when: "1970-01-01T00:00:00.000Z" });
    expect(toJsonValue([undefined, Number.NaN, () => 1])).toEqual([null, null, null]);
    expect(toJsonValue(undefined)).toBeNull();
  });

  it("falls back to a string for a value whose getters throw", () => {
    const hostile = {
      get boom(): never {
        throw new Error("no");
      },
    };
    expect(typeof toJsonValue(hostile)).toBe("string");
  });

  it("stores -0 as 0, as JSON reads it back (found by the property below, seed 1531963500)", () => {
    expect(Object.is(toJsonValue(-0), 0)).toBe(true);
    expect(toJsonValue({ a: -0 })).toEqual({ a: 0 });
  });

  it("never throws, and always gives a value JSON round-trips unchanged", () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true }), (value) => {
        const json = toJsonValue(value);
        expect(JSON.parse(JSON.stringify(json) ?? "null")).toEqual(json ?? null);
      }),
    );
  });
});
