import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseActionBody, plainActionBody } from "../src/protocol/action-body.js";
import { actionBodySchema } from "../src/protocol/index.js";

const at = { offset: 0, line: 1, column: 1 };

/** Values of every JSON type, biased towards the edges of each field's rule. */
const jsonValue = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1, 1.5, 30, 100, 101, 2_147_483, 2_147_484, 1e-9, ""),
  fc.constantFrom("x", " ", "out_1", "1bad", "fail", "skip", "retry", "later", "a1", "not ok"),
  fc.string({ maxLength: 6 }),
  fc.array(fc.constantFrom("a1", "b.2", "bad id", "", 3), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

/** Mostly a valid value of the field, sometimes anything at all. */
const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: jsonValue, weight: 1 });

/** Bodies that mostly fit, with every kind of misfit mixed in now and then. */
const body = fc
  .tuple(
    fc.record(
      {
        name: field(fc.constantFrom("web_scraper", "x", "a b", " x ")),
        parameters: field(fc.dictionary(fc.string({ maxLength: 3 }), jsonValue, { maxKeys: 3 })),
      },
      { requiredKeys: ["parameters"] },
    ),
    fc.record(
      {
        output_key: field(fc.constantFrom("out", "_k1", "A9", null)),
        depends_on: field(fc.array(fc.constantFrom("a1", "b.2", "x:y@z", "9-z"), { maxLength: 3 })),
        timeout: field(fc.constantFrom(0.5, 30, 1e-4, 2_147_483, null)),
        retry: field(fc.integer({ min: 0, max: 100 })),
        on_error: field(fc.constantFrom("fail", "skip", "retry", null)),
      },
      { requiredKeys: [] },
    ),
    fc.oneof({ arbitrary: fc.constant(null), weight: 10 }, { arbitrary: jsonValue, weight: 1 }),
  )
  .map(([required, optional, extra]) => ({
    ...required,
    ...optional,
    ...(extra === null ? {} : { extra }),
  }));

/** What the zod schema makes of a body, in `ActionBody`'s names. */
function viaSchema(value: unknown) {
  const result = actionBodySchema.safeParse(value);
  if (!result.success) return undefined;
  const data = result.data;
  return {
    name: data.name,
    parameters: data.parameters,
    ...(data.output_key == null ? {} : { outputKey: data.output_key }),
    dependsOn: data.depends_on ?? [],
    ...(data.timeout == null ? {} : { timeoutMs: Math.ceil(data.timeout * 1000) }),
    retry: data.retry ?? 0,
    onError: data.on_error ?? "fail",
  };
}

describe("the action body", () => {
  it("has a fast path that accepts exactly what the zod schema accepts, with the same result", () => {
    fc.assert(
      fc.property(body, (value) => {
        expect(plainActionBody(value)).toEqual(viaSchema(value));
      }),
      { numRuns: 3000 },
    );
  });

  it("parses through the schema when the fast path declines, and never throws", () => {
    fc.assert(
      fc.property(body, (value) => {
        const text = JSON.stringify(value);
        const parsed = parseActionBody(text, at);
        const expected = viaSchema(value);
        if (expected) expect(parsed).toEqual({ body: expected });
        else expect(parsed).toMatchObject({ problem: { code: "protocol.bad-action-body" } });
      }),
      { numRuns: 500 },
    );
  });

  it("rejects a parameters object that carries a __proto__ key only on the fast path", () => {
    const value = JSON.parse('{"name":"x","parameters":{"__proto__":{"a":1}}}');
    expect(plainActionBody(value)).toBeUndefined();
    expect(parseActionBody('{"name":"x","parameters":{"__proto__":{"a":1}}}', at)).toHaveProperty(
      "body",
    );
  });
});
