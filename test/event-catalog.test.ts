import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  EVENT_CATALOG,
  EventValidationError,
  prepareEvent,
} from "../src/spec/index.js";

const defaults = {
  now: () => "2026-01-01T00:00:00.000Z",
  newId: () => "01JABCDEFGHJKMNPQRSTVWXYZ0",
};

describe("event catalog", () => {
  it("gives every type a description, streams and a criticality; only droppable types coalesce", () => {
    for (const [type, spec] of Object.entries(EVENT_CATALOG)) {
      expect(type).toMatch(/^[a-z]+\.[a-z]+(-[a-z]+)*$/);
      expect(spec.description.length).toBeGreaterThan(10);
      expect(spec.streams.length).toBeGreaterThan(0);
      if ("coalesce" in spec) expect(spec.criticality).toBe("droppable");
    }
  });

  it("fills in defaults and keeps what the caller set", () => {
    const event = prepareEvent(
      { continuity: "c", type: "turn.added", actor: "a", origin: "cli", data: { text: "x" } },
      defaults,
    );
    expect(event).toEqual({
      id: defaults.newId(),
      continuity: "c",
      stream: { kind: "continuity", id: "c" },
      type: "turn.added",
      ts: defaults.now(),
      actor: "a",
      origin: "cli",
      criticality: "critical",
      data: { text: "x" },
    });
  });

  it("reports every problem at once, with paths", () => {
    try {
      prepareEvent(
        { continuity: "", type: "thread.started", data: { chain_root: 5, extra: 1 } } as never,
        defaults,
      );
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(EventValidationError);
      const paths = (error as EventValidationError).issues.map((issue) => issue.path);
      expect(paths).toEqual(
        expect.arrayContaining(["continuity", "data.directive", "data.chain_root", "data"]),
      );
    }
  });

  it("coalesces token deltas of one block only", () => {
    const coalesce = EVENT_CATALOG["token.delta"].coalesce!;
    expect(coalesce({ block: "text", text: "a" }, { block: "text", text: "b" })).toEqual({
      block: "text",
      text: "ab",
      deltas: [1, 1],
    });
    // Already-coalesced events keep every delta boundary.
    expect(
      coalesce({ block: "text", text: "abc", deltas: [1, 2] }, { block: "text", text: "de" }),
    ).toEqual({ block: "text", text: "abcde", deltas: [1, 2, 2] });
    expect(
      coalesce({ block: "text", text: "a" }, { block: "thinking", text: "b" }),
    ).toBeUndefined();
  });
});

describe("canonical JSON", () => {
  it("sorts keys at every depth and drops undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: null }], c: "é" }, u: undefined })).toBe(
      '{"a":{"c":"é","d":[1,{"y":null,"z":1}]},"b":1}',
    );
  });

  it("gives the same text for values that round-trip through JSON", () => {
    const value = { text: "lone \ud800", n: -0, big: 1e21, nested: { "\u2028": true } };
    expect(canonicalJson(JSON.parse(JSON.stringify(value)))).toBe(canonicalJson(value));
  });

  it("refuses what JSON cannot hold", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(TypeError);
    expect(() => canonicalJson([undefined])).toThrow(TypeError);
  });
});
