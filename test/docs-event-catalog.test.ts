import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EVENT_CATALOG } from "../src/spec/index.js";

const doc = readFileSync(new URL("../docs/events.md", import.meta.url), "utf8");

/** The type table's rows as trimmed cells, keyed by the type named in the first cell. */
const rows = new Map(
  doc
    .split("\n")
    .map((line) => line.split("|").map((cell) => cell.trim()))
    .filter((cells) => /^`[a-z]+\.[a-z-]+`$/.test(cells[1] ?? ""))
    .map((cells) => [cells[1]!.slice(1, -1), cells.slice(2)]),
);

describe("docs/events.md", () => {
  it("lists every catalog type with its criticality", () => {
    for (const [type, spec] of Object.entries(EVENT_CATALOG)) {
      expect(rows.get(type), `docs/events.md has no row for ${type}`).toBeDefined();
      expect(rows.get(type)![0]).toBe(spec.criticality);
    }
  });

  it("lists no type the catalog does not have", () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(EVENT_CATALOG).sort());
  });
});
