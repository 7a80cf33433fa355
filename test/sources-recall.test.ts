/**
 * Recalling a source's chunks from a real log (SQLite, PostgreSQL), with other sources and
 * continuities interleaved: any range reads back exactly its chunks' lines (artifacts included),
 * paging by `next_chunk` reads a range exactly once, a chunk larger than the bounds is cut with
 * a note, and unknown sources or ranges not logged are typed errors that say what exists.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import {
  checkSourceEntry,
  recallSourceLines,
  SourceRecallError,
  sourceEntryOf,
} from "../src/sources/index.js";
import { createTestDatabase } from "./support/postgres-server.js";

const CHUNKS = 40;
/** The lines of chunk n of source "app": n lines, chunk 7 large enough for an artifact. */
const linesOf = (n: number) =>
  Array.from({ length: n === 7 ? 3 : (n % 5) + 1 }, (_, i) =>
    n === 7 ? `${"x".repeat(500)} ${i}` : `chunk ${n} line ${i}`,
  );

const added = (continuity: string, id: string) => ({
  continuity,
  stream: { kind: "source" as const, id },
  type: "source.added" as const,
  data: {
    source_id: id,
    definition: sourceEntryOf(
      checkSourceEntry({ id, kind: "file", target: `${id}.log` }).definition!,
    ),
    by: "manifest" as const,
  },
});

async function appendChunk(store: EventStore, continuity: string, id: string, n: number) {
  const lines = id === "app" ? linesOf(n) : [`${id} ${n}`];
  const big = n === 7 && id === "app";
  const artifact = big
    ? await store.artifacts.put(Buffer.from(lines.join("\n")), { mediaType: "text/plain" })
    : undefined;
  await store.append({
    continuity,
    stream: { kind: "source", id },
    type: "source.chunk",
    data: {
      source_id: id,
      n,
      ...(artifact
        ? {
            artifact: {
              hash: artifact.hash,
              size: artifact.size,
              media_type: artifact.mediaType,
            },
          }
        : { lines }),
      line_count: lines.length,
      bytes: 10,
      cursor: { n },
    },
  });
}

/** Chunk headings left out: the source lines of a recall's text. */
const sourceLines = (text: string) =>
  text.split("\n").filter((line) => !/^--- chunk #\d+ ---$/.test(line));

let dir: string;
const stores: EventStore[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-source-recall-"));
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

const locations = {
  sqlite: async () => join(dir, "store"),
  postgres: async () => createTestDatabase(inject("postgresUrl")),
};

describe.each(Object.entries(locations))("recallSourceLines on %s", (_kind, location) => {
  let store: EventStore;
  beforeAll(async () => {
    store = await openEventStore({ db: await location() });
    stores.push(store);
    await store.append(added("c", "app"));
    await store.append(added("c", "other"));
    await store.append(added("c", "quiet"));
    for (let n = 1; n <= CHUNKS; n++) {
      await appendChunk(store, "c", "app", n);
      if (n % 3 === 0) await appendChunk(store, "c", "other", n / 3);
      if (n % 4 === 0) await appendChunk(store, "elsewhere", "app", n / 4);
    }
  });

  it("reads any range's lines exactly, artifacts included", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: CHUNKS }),
        fc.integer({ min: 0, max: 8 }),
        async (from, width) => {
          const to = Math.min(CHUNKS, from + width);
          const recalled = await recallSourceLines(store, "c", {
            source: "app",
            from_chunk: from,
            to_chunk: to,
            max_lines: 10_000,
            max_bytes: 1_000_000,
          });
          const expected: string[] = [];
          for (let n = from; n <= to; n++) expected.push(...linesOf(n));
          expect(sourceLines(recalled.text)).toEqual(expected);
          expect(recalled.text.split("\n")[0]).toBe(`--- chunk #${from} ---`);
          expect(recalled).toMatchObject({ lines: expected.length, truncated: false });
          expect(recalled.next_chunk).toBeUndefined();
        },
      ),
      { numRuns: 40 },
    );
  });

  it("pages through a range by next_chunk, every line once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 6, max: 30 }), async (maxLines) => {
        const read: string[] = [];
        let from: number | undefined = 1;
        while (from !== undefined) {
          const page = await recallSourceLines(store, "c", {
            source: "app",
            from_chunk: from,
            to_chunk: CHUNKS,
            max_lines: maxLines,
            max_bytes: 1_000_000,
          });
          expect(page.lines).toBeLessThanOrEqual(maxLines);
          expect(page.truncated).toBe(page.next_chunk !== undefined);
          read.push(...sourceLines(page.text));
          from = page.next_chunk;
        }
        const expected: string[] = [];
        for (let n = 1; n <= CHUNKS; n++) expected.push(...linesOf(n));
        expect(read).toEqual(expected);
      }),
      { numRuns: 10 },
    );
  });

  it("cuts a chunk larger than the bounds, saying so, and names the next chunk", async () => {
    const recalled = await recallSourceLines(store, "c", {
      source: "app",
      from_chunk: 7,
      to_chunk: 9,
      max_bytes: 1_300,
    });
    expect(recalled).toMatchObject({ lines: 2, truncated: true, next_chunk: 8 });
    expect(recalled.text).toContain("(1 more lines of chunk #7 not shown");
    expect(Buffer.byteLength(recalled.text)).toBeLessThanOrEqual(1_300);
    const defaults = await recallSourceLines(store, "c", {
      source: "app",
      from_chunk: 1,
      to_chunk: CHUNKS,
      max_lines: 50,
    });
    expect(defaults.lines).toBeLessThanOrEqual(50);
    expect(defaults.next_chunk).toBeGreaterThan(1);
  });

  it("returns a range that reaches past the last chunk up to it", async () => {
    const recalled = await recallSourceLines(store, "c", {
      source: "app",
      from_chunk: 39,
      to_chunk: 45,
    });
    expect(sourceLines(recalled.text)).toEqual([
      ...linesOf(39),
      ...linesOf(40),
      "(chunks after 40 are not logged yet)",
    ]);
    expect(recalled).toMatchObject({
      truncated: true,
      lines: linesOf(39).length + linesOf(40).length,
    });
    expect(recalled.next_chunk).toBeUndefined();
  });

  it("says which sources and chunks exist when asked for others", async () => {
    const failure = async (query: Parameters<typeof recallSourceLines>[2]) => {
      try {
        await recallSourceLines(store, "c", query);
      } catch (error) {
        expect(error).toBeInstanceOf(SourceRecallError);
        return error as SourceRecallError;
      }
      throw new Error("the recall succeeded");
    };
    const unknown = await failure({ source: "ap", from_chunk: 1, to_chunk: 2 });
    expect(unknown.code).toBe("source.unknown");
    expect(unknown.message).toContain('(did you mean "app"?): its sources are app, other, quiet');
    const later = await failure({ source: "app", from_chunk: 41, to_chunk: 50 });
    expect(later.code).toBe("source.range-unavailable");
    expect(later.message).toContain("chunks 1-40 exist");
    const quiet = await failure({ source: "quiet", from_chunk: 1, to_chunk: 1 });
    expect(quiet.code).toBe("source.range-unavailable");
    expect(quiet.message).toContain("has not logged any chunk yet");
    expect((await failure({ source: "app", from_chunk: 5, to_chunk: 4 })).code).toBe(
      "source.bad-range",
    );
    expect((await failure({ source: "app", from_chunk: 0, to_chunk: 4 })).code).toBe(
      "source.bad-range",
    );
  });
});
