import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { envelopeSchema, isPlainEnvelope } from "../src/spec/envelope.js";

/** Values near every boundary the schema draws, and plain garbage. */
const tricky = fc.oneof(
  fc.constantFrom(
    "main",
    "",
    " ",
    "a b",
    "-x",
    "x".repeat(128),
    "x".repeat(129),
    "é",
    "🧵".repeat(100),
    "🧵".repeat(101),
    "y".repeat(200),
    "y".repeat(201),
    "ok\u0000",
    "ok\n",
    "lone \ud800",
    "01JABCDEFGHJKMNPQRSTVWXYZ0",
    "01JABCDEFGHJKMNPQRSTVWXYZU",
    "2026-01-01T00:00:00Z",
    null,
    undefined,
    0,
    true,
    {},
    [],
  ),
  fc.string({ maxLength: 210 }),
  fc.string({ unit: "binary", maxLength: 210 }),
  fc.record({
    kind: fc.constantFrom("step", "continuity", "other"),
    id: fc.constantFrom("s1", "a b", "x".repeat(129)),
  }),
  fc.record({ kind: fc.constant("step"), id: fc.constant("s1"), extra: fc.constant(1) }),
);

/** A valid envelope with one field replaced (or added) by a tricky value. */
const envelope = fc
  .tuple(
    fc.constantFrom(
      "continuity",
      "type",
      "data",
      "stream",
      "actor",
      "origin",
      "ts",
      "id",
      "surprise",
    ),
    tricky,
    fc.boolean(),
  )
  .map(([field, value, withStream]) => {
    const base: Record<string, unknown> = {
      continuity: "main",
      type: "turn.added",
      data: {},
      actor: "ada",
      origin: "cli",
    };
    if (withStream) base.stream = { kind: "step", id: "s1" };
    base[field] = value;
    return base;
  });

describe("the envelope fast check", () => {
  it("never accepts an envelope the schema rejects", () => {
    fc.assert(
      fc.property(envelope, (input) => {
        if (isPlainEnvelope(input)) expect(envelopeSchema.safeParse(input).success).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it("accepts the ordinary envelopes appends make", () => {
    expect(
      isPlainEnvelope({
        continuity: "main",
        type: "turn.added",
        actor: "ada",
        origin: "cli",
        data: { text: "hi" },
      }),
    ).toBe(true);
    expect(
      isPlainEnvelope({
        continuity: "main",
        type: "token.delta",
        stream: { kind: "step", id: "s-1" },
        data: {},
      }),
    ).toBe(true);
  });
});
