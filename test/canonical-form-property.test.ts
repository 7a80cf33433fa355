import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalEvent,
  EventValidationError,
  type NewEvent,
  prepareEvent,
} from "../src/spec/index.js";

/** The canonical form as its definition states it: one `JSON.stringify` of the whole. */
function reference(event: ReturnType<typeof prepareEvent>, dataJson: string): string {
  const envelope = [
    event.id,
    event.continuity,
    event.stream.kind,
    event.stream.id,
    event.type,
    event.ts,
    event.actor,
    event.origin,
    event.criticality,
  ];
  return `[${JSON.stringify("spool.event.v1")},${JSON.stringify(envelope)},${dataJson}]`;
}

/** Strings with the characters JSON escapes, and ones it does not. */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('say "hi"', "back\\slash", "tab\there", "é ü 🧵", "x:y@z.w-1", "<tag>", "\u2028"),
);

const input = fc.record({
  continuity: fc.oneof(text, fc.constantFrom("main", "c-1.2:x@y")),
  actor: fc.option(fc.oneof(text, fc.constant("ada")), { nil: undefined }),
  origin: fc.option(fc.oneof(text, fc.constant("cli")), { nil: undefined }),
  ts: fc.option(fc.constantFrom("2026-01-31T12:00:00.000Z", "2026-01-31T12:00:00+05:30"), {
    nil: undefined,
  }),
  stream: fc.option(fc.record({ kind: fc.constant("step"), id: text }), { nil: undefined }),
  delta: fc.boolean(),
});

describe("canonical form", () => {
  it("is the one-stringify definition for every event validation accepts", () => {
    const defaults = {
      now: () => "2026-01-31T12:00:00.000Z",
      newId: () => "01JABCDEFGHJKMNPQRSTVWXYZ0",
    };
    let accepted = 0;
    fc.assert(
      fc.property(input, text, (value, body) => {
        const event: NewEvent = value.delta
          ? {
              continuity: value.continuity,
              type: "token.delta",
              stream: value.stream ?? { kind: "step", id: "s" },
              data: { block: "text", text: body },
              ...(value.ts && { ts: value.ts }),
            }
          : {
              continuity: value.continuity,
              type: "turn.added",
              actor: value.actor ?? "ada",
              origin: value.origin ?? "cli",
              data: { text: body },
              ...(value.ts && { ts: value.ts }),
            };
        let prepared: ReturnType<typeof prepareEvent>;
        try {
          prepared = prepareEvent(event, defaults);
        } catch (error) {
          expect(error).toBeInstanceOf(EventValidationError);
          return;
        }
        accepted += 1;
        const dataJson = JSON.stringify(prepared.data);
        expect(canonicalEvent(prepared, dataJson)).toBe(reference(prepared, dataJson));
      }),
      { numRuns: 2_000 },
    );
    expect(accepted).toBeGreaterThan(200);
  });
});
