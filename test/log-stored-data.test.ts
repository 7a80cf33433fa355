/**
 * Events answered from memory (the recent tail, a read ahead) carry their data as a read of the
 * database gives it, parsed only when first read: to whoever holds one it is a plain event, whose
 * data reads, spreads, serialises and can be replaced like any other's.
 */
import { describe, expect, it } from "vitest";
import { withStoredData } from "../src/log/stored-data.js";
import type { SpoolEvent } from "../src/spec/index.js";

const event: SpoolEvent = {
  seq: 7,
  id: "01J00000000000000000000007",
  continuity: "a",
  stream: { kind: "continuity", id: "a" },
  type: "turn.added",
  ts: "2026-11-27T00:00:00.000Z",
  actor: "ada",
  origin: "cli",
  criticality: "critical",
  data: { text: "live object", zeta: 1, alpha: 2 },
  hash: "h",
};

describe("an event with its stored data read when asked for", () => {
  it("parses once, on first read, and is a plain event otherwise", () => {
    let parses = 0;
    const stored = withStoredData(event, () => {
      parses += 1;
      return '{"alpha":2,"text":"live object","zeta":1}';
    });
    expect(parses).toBe(0);
    expect(stored.data).toEqual({ alpha: 2, text: "live object", zeta: 1 });
    // As stored: canonical key order, not the live object's.
    expect(Object.keys(stored.data as object)).toEqual(["alpha", "text", "zeta"]);
    expect(stored.data).toBe(stored.data);
    expect(parses).toBe(1);
    expect(JSON.parse(JSON.stringify(stored))).toEqual({ ...event, data: stored.data });
    expect({ ...stored }.data).toBe(stored.data);
    stored.data = { text: "replaced" };
    expect(stored.data).toEqual({ text: "replaced" });
    expect(parses).toBe(1);
    expect(event.data).toEqual({ text: "live object", zeta: 1, alpha: 2 });
  });
});
