/**
 * The SQLite memory search's shape at a size where it matters (more than 500 entries): a term in
 * most entries is dropped when the query has a telling one, entries holding every telling term
 * rank before those holding any, and a query of common terms alone still answers.
 */
import { describe, expect, it } from "vitest";
import { type IndexOperation, openSqliteMemory, textHash } from "../src/memory/index.js";

const put = (n: number, text: string): { seq: number; operation: IndexOperation } => ({
  seq: n,
  operation: {
    op: "put",
    entry: {
      id: `e-${n}`,
      continuity: `c-${n % 7}`,
      kind: "fact",
      ref: `p-${n}`,
      text,
      ts: "2026-01-01T00:00:00.000Z",
      seq: n,
      hash: textHash(text),
    },
  },
});

describe("SQLite memory search", () => {
  it("drops common terms, ranks AND before OR, and answers common terms alone", async () => {
    const backend = openSqliteMemory(":memory:");
    try {
      const operations = Array.from({ length: 800 }, (_, n) =>
        put(n + 1, `status update number ${n} about the weekly project`),
      );
      operations.push(put(801, "the beagle needs his rabies shot in March, says the project vet"));
      operations.push(put(802, "the beagle sleeps in the kitchen"));
      operations.push(put(803, "a rabies shot for the cat"));
      await backend.apply(operations, 803);

      const both = await backend.search(["project", "beagle", "rabies"], {}, 3);
      expect(both[0]?.entry.id).toBe("e-801");
      // "project" is in every entry but one: dropped, so the OR that follows the AND (one hit
      // for 3 asked) ranks only the entries naming the beagle or rabies.
      expect(both.map((hit) => hit.entry.id).sort()).toEqual(["e-801", "e-802", "e-803"]);

      const common = await backend.search(["weekly", "project"], {}, 5);
      expect(common).toHaveLength(5);
      for (const hit of common) expect(hit.entry.text).toContain("weekly project");

      const scoped = await backend.search(["beagle"], { exclude: ["c-3"] }, 5);
      expect(scoped.map((hit) => hit.entry.id)).toEqual(["e-802"]);
    } finally {
      await backend.close();
    }
  });

  it("answers common terms alone from the least dense of them, more terms held first, newest first", async () => {
    const backend = openSqliteMemory(":memory:");
    try {
      // 3,600 entries: "alpha" in all, "bravo" in every 6th, "delta" in every 7th: all three
      // common (in at least 500), alpha dense enough to tell nothing.
      const operations = Array.from({ length: 3600 }, (_, index) => {
        const n = index + 1;
        const words = ["alpha", `entry${n}`];
        if (n % 6 === 0) words.push("bravo");
        if (n % 7 === 0) words.push("delta");
        return put(n, words.join(" "));
      });
      await backend.apply(operations, 3600);
      await backend.compact?.();

      const both = await backend.search(["alpha", "bravo", "delta"], {}, 5);
      // Those holding both telling terms (every 42nd), newest first: 3570, 3528, 3486, ...
      expect(both.map((hit) => hit.entry.id)).toEqual([
        "e-3570",
        "e-3528",
        "e-3486",
        "e-3444",
        "e-3402",
      ]);
      expect(both.every((hit) => hit.score === 2)).toBe(true);

      // The scope leaves none holding both (every 42nd is in c-0), nor any holding delta: the
      // last step takes either term.
      const scoped = await backend.search(["bravo", "delta"], { exclude: ["c-0"] }, 3);
      expect(scoped.map((hit) => hit.entry.id)).toEqual(["e-3600", "e-3594", "e-3588"]);
      expect(scoped.every((hit) => hit.score === 1)).toBe(true);
      const wide = await backend.search(["delta", "bravo"], {}, 90);
      expect(wide.slice(0, 85).every((hit) => hit.score === 2)).toBe(true);
      expect(wide.slice(85).every((hit) => hit.score === 1)).toBe(true);

      // Only a dense term: its newest entries.
      const dense = await backend.search(["alpha"], {}, 2);
      expect(dense.map((hit) => hit.entry.id)).toEqual(["e-3600", "e-3599"]);
    } finally {
      await backend.close();
    }
  });
});
