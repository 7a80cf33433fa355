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
});
