import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CONDITION_OPS,
  compileCondition,
  evaluateCondition,
  type HookCondition,
  parsePath,
} from "../src/hooks/index.js";

/** Compiles `raw`, failing the test with the issues when it does not compile. */
function compile(raw: unknown): HookCondition {
  const { condition, issues } = compileCondition(raw);
  expect(issues).toEqual([]);
  return condition!;
}

const holds = (raw: unknown, payload: unknown) => evaluateCondition(compile(raw), payload);

const payload = {
  pressure_ratio: 0.75,
  reason: "",
  tags: ["a", { b: 1 }],
  error: {
    code: "rate_limit.exceeded",
    transient: true,
    details: { attempts: [{ code: "E1" }, { code: "E2" }] },
  },
  nothing: null,
};

describe("paths", () => {
  it("parse dotted fields and [n] indexes, and refuse anything else", () => {
    expect(parsePath("error.details.attempts[0].code")).toEqual([
      "error",
      "details",
      "attempts",
      0,
      "code",
    ]);
    expect(parsePath("tags[1][0]")).toEqual(["tags", 1, 0]);
    for (const bad of ["", ".a", "a.", "a..b", "a[x]", "[0]", "a[-1]", "1a", "a b"]) {
      expect(parsePath(bad), bad).toBeUndefined();
    }
  });

  it("read through mappings and lists, never into inherited properties", () => {
    expect(holds({ path: "error.details.attempts[1].code", op: "eq", value: "E2" }, payload)).toBe(
      true,
    );
    expect(holds({ path: "error.details.attempts[2].code", op: "exists" }, payload)).toBe(false);
    expect(holds({ path: "tags[1].b", op: "eq", value: 1 }, payload)).toBe(true);
    expect(holds({ path: "error.constructor", op: "exists" }, payload)).toBe(false);
    expect(holds({ path: "tags.length", op: "exists" }, payload)).toBe(false);
  });
});

describe("operators", () => {
  it("eq and ne compare deeply; ne holds for a missing path", () => {
    expect(holds({ path: "error.transient", op: "eq", value: true }, payload)).toBe(true);
    expect(holds({ path: "tags", op: "eq", value: ["a", { b: 1 }] }, payload)).toBe(true);
    expect(holds({ path: "tags", op: "eq", value: ["a", { b: 2 }] }, payload)).toBe(false);
    expect(holds({ path: "nothing", op: "eq", value: null }, payload)).toBe(true);
    expect(holds({ path: "error.transient", op: "ne", value: true }, payload)).toBe(false);
    expect(holds({ path: "missing", op: "eq", value: null }, payload)).toBe(false);
    expect(holds({ path: "missing", op: "ne", value: true }, payload)).toBe(true);
  });

  it("gt, gte, lt, lte need a number at the path", () => {
    expect(holds({ path: "pressure_ratio", op: "gte", value: 0.75 }, payload)).toBe(true);
    expect(holds({ path: "pressure_ratio", op: "gt", value: 0.75 }, payload)).toBe(false);
    expect(holds({ path: "pressure_ratio", op: "lt", value: 0.8 }, payload)).toBe(true);
    expect(holds({ path: "pressure_ratio", op: "lte", value: 0.7 }, payload)).toBe(false);
    expect(holds({ path: "error.code", op: "gt", value: 0 }, payload)).toBe(false);
    expect(holds({ path: "missing", op: "lt", value: 1 }, payload)).toBe(false);
    expect(holds({ path: "pressure", op: "gte", value: 0 }, { pressure: "0.9" })).toBe(false);
  });

  it("in looks the value up in the list", () => {
    expect(
      holds({ path: "error.code", op: "in", value: ["x", "rate_limit.exceeded"] }, payload),
    ).toBe(true);
    expect(holds({ path: "tags[1]", op: "in", value: [{ b: 1 }] }, payload)).toBe(true);
    expect(holds({ path: "error.code", op: "in", value: ["x"] }, payload)).toBe(false);
    expect(holds({ path: "missing", op: "in", value: [null] }, payload)).toBe(false);
  });

  it("contains is a substring test on text and a deep element test on lists", () => {
    expect(holds({ path: "error.code", op: "contains", value: "limit" }, payload)).toBe(true);
    expect(holds({ path: "error.code", op: "contains", value: "quota" }, payload)).toBe(false);
    expect(holds({ path: "tags", op: "contains", value: { b: 1 } }, payload)).toBe(true);
    expect(holds({ path: "tags", op: "contains", value: "b" }, payload)).toBe(false);
    expect(holds({ path: "pressure_ratio", op: "contains", value: 7 }, payload)).toBe(false);
    expect(holds({ path: "error.code", op: "contains", value: 1 }, payload)).toBe(false);
  });

  it("regex tests text only, with the expression compiled once at load", () => {
    const condition = compile({ path: "error.code", op: "regex", value: "^rate_limit\\." });
    expect(condition).toMatchObject({ pattern: /^rate_limit\./ });
    expect(evaluateCondition(condition, payload)).toBe(true);
    expect(evaluateCondition(condition, { error: { code: "timeout" } })).toBe(false);
    expect(evaluateCondition(condition, { error: { code: 42 } })).toBe(false);
    expect(evaluateCondition(condition, {})).toBe(false);
  });

  it("exists is true by default, and its value false asks for absence", () => {
    expect(holds({ path: "nothing", op: "exists" }, payload)).toBe(true);
    expect(holds({ path: "reason", op: "exists", value: true }, payload)).toBe(true);
    expect(holds({ path: "missing", op: "exists" }, payload)).toBe(false);
    expect(holds({ path: "missing", op: "exists", value: false }, payload)).toBe(true);
    expect(holds({ path: "reason", op: "exists", value: false }, payload)).toBe(false);
  });
});

describe("combinators", () => {
  it("nest any, all and not freely", () => {
    const raw = {
      all: [
        { path: "error.transient", op: "eq", value: true },
        {
          any: [
            { path: "error.code", op: "regex", value: "^timeout" },
            { not: { path: "error.details.attempts[1].code", op: "ne", value: "E2" } },
          ],
        },
      ],
    };
    expect(holds(raw, payload)).toBe(true);
    expect(holds({ not: raw }, payload)).toBe(false);
    expect(holds(raw, { ...payload, error: { ...payload.error, details: {} } })).toBe(false);
  });
});

describe("validation at load", () => {
  const issues = (raw: unknown) => compileCondition(raw).issues;

  it("names the field and what to write for each wrong operand", () => {
    expect(issues({ path: "x", op: "gte", value: "0.8" })).toEqual([
      { path: ["value"], message: "must be a number for gte, e.g. value: 0.8" },
    ]);
    expect(issues({ path: "x", op: "in", value: "a" })[0]?.message).toMatch(/must be a list/);
    expect(issues({ path: "x", op: "exists", value: "yes" })[0]?.message).toMatch(/true or false/);
    expect(issues({ path: "x", op: "eq" })[0]?.message).toMatch(/is missing/);
    expect(issues({ path: "x", op: "regex", value: 3 })[0]?.message).toMatch(/regular expression/);
    expect(issues({ path: "x", op: "like", value: 1 })).toEqual([
      { path: ["op"], message: `is unknown: op is one of ${CONDITION_OPS.join(", ")}` },
    ]);
    expect(issues({ path: "a..b", op: "exists" })[0]).toMatchObject({ path: ["path"] });
    expect(issues({ op: "exists" })[0]?.message).toMatch(/is missing: name a field/);
  });

  it("refuses a regular expression that does not compile", () => {
    expect(issues({ path: "x", op: "regex", value: "([a-z" })).toEqual([
      { path: ["value"], message: expect.stringMatching(/is not a valid regular expression/) },
    ]);
  });

  it("refuses malformed combinators, with paths into the nesting", () => {
    expect(issues({ any: [] })).toEqual([
      { path: ["any"], message: "must be a list of at least one condition" },
    ]);
    expect(
      issues({ all: [{ path: "x", op: "exists" }, { not: { path: "y", op: "gt" } }] }),
    ).toEqual([{ path: ["all", 1, "not", "value"], message: expect.stringMatching(/is missing/) }]);
    expect(issues({ any: [{ path: "x", op: "exists" }], path: "y" })[0]).toMatchObject({
      path: ["path"],
    });
    expect(issues({ path: "x", op: "exists", values: [1] })[0]).toMatchObject({
      path: ["values"],
      message: expect.stringMatching(/^unknown field/),
    });
    expect(issues("x > 1")[0]?.message).toMatch(/must be a mapping/);
  });
});

describe("properties", () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  const field = fc.constantFrom("a", "b", "c");
  const path = fc
    .array(fc.oneof(field, fc.nat({ max: 2 })), { minLength: 0, maxLength: 2 })
    .chain((rest) => field.map((first) => [first, ...rest]))
    .map((parts) =>
      parts
        .map((part, index) => (typeof part === "number" ? `[${part}]` : index ? `.${part}` : part))
        .join(""),
    )
    .filter((text) => parsePath(text) !== undefined);
  const payloads = fc.dictionary(field, json, { maxKeys: 3 });
  const leaf = fc.oneof(
    fc.record({ path, op: fc.constantFrom("eq", "ne", "contains"), value: json }),
    fc.record({
      path,
      op: fc.constantFrom("gt", "gte", "lt", "lte"),
      value: fc.double({ noNaN: true, noDefaultInfinity: true }),
    }),
    fc.record({ path, op: fc.constant("in"), value: fc.array(json, { maxLength: 3 }) }),
    fc.record({ path, op: fc.constant("exists"), value: fc.boolean() }),
  );

  it("combinators follow boolean logic over any leaves and any payload", () => {
    fc.assert(
      fc.property(leaf, leaf, payloads, (a, b, data) => {
        const x = holds(a, data);
        const y = holds(b, data);
        expect(holds({ not: a }, data)).toBe(!x);
        expect(holds({ all: [a, b] }, data)).toBe(x && y);
        expect(holds({ any: [a, b] }, data)).toBe(x || y);
      }),
    );
  });

  it("ne is the negation of eq, and exists false of exists true, present path or not", () => {
    fc.assert(
      fc.property(path, json, payloads, (at, value, data) => {
        expect(holds({ path: at, op: "ne", value }, data)).toBe(
          !holds({ path: at, op: "eq", value }, data),
        );
        expect(holds({ path: at, op: "exists", value: false }, data)).toBe(
          !holds({ path: at, op: "exists" }, data),
        );
      }),
    );
  });

  it("a missing path is false for every op but ne and exists false", () => {
    fc.assert(
      fc.property(leaf, (condition) => {
        const expected =
          condition.op === "ne" || (condition.op === "exists" && condition.value === false);
        expect(holds(condition, {})).toBe(expected);
      }),
    );
  });
});
