import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ChunkBatcher,
  compileFilter,
  DEFAULT_BATCHING,
  type SourceChunkEmission,
  type SourceDefinition,
  type SplitLine,
} from "../src/sources/index.js";

type Channel = "stdout" | "stderr" | undefined;

function definition(
  batching: { maxLines: number; maxBytes: number },
  include: string[] = [],
  exclude: string[] = [],
  patterns: Record<string, string> = {},
): Pick<SourceDefinition, "batching" | "include" | "exclude" | "patterns"> {
  return { batching: { ...DEFAULT_BATCHING, ...batching }, include, exclude, patterns };
}

function line(text: string, extra = 0): SplitLine {
  return { text, bytes: Buffer.byteLength(text) + 1 + extra, cut: 0, invalid: 0 };
}

/** What the batcher returned, each chunk with the lines (kept or not) that went into it. */
interface Batched {
  chunk: SourceChunkEmission;
  read: { line: SplitLine; channel: Channel }[];
}

/** Feeds `input` to a batcher, then flushes; every chunk with the lines read into it. */
function batchAll(
  batcher: ChunkBatcher,
  input: readonly { line: SplitLine; channel: Channel }[],
): Batched[] {
  const out: Batched[] = [];
  let next = 0;
  const take = (chunk: SourceChunkEmission | undefined): void => {
    if (!chunk) return;
    const last = Number(chunk.cursor.n);
    out.push({ chunk, read: input.slice(next, last + 1) });
    next = last + 1;
  };
  input.forEach((entry, index) => {
    take(batcher.add(entry.line, { n: index }, entry.channel));
  });
  while (batcher.holding) take(batcher.flush());
  return out;
}

const textArb = fc.oneof(
  fc.constantFrom("error: disk", "warn x", "info ok", "ERROR big", ""),
  fc.string({ maxLength: 20 }),
);
const inputArb = fc.array(
  fc.record({
    line: fc.tuple(textArb, fc.nat({ max: 50 })).map(([text, extra]) => line(text, extra)),
    channel: fc.constantFrom<Channel>(undefined, "stdout", "stderr"),
  }),
  { maxLength: 120 },
);

describe("chunk batcher (properties)", () => {
  it("bounds chunks, loses no line, keeps channels apart and counts skips and matches", () => {
    fc.assert(
      fc.property(
        inputArb,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 200 }),
        fc.subarray(["error", "^$", "x"]),
        fc.subarray(["warn", "ok"]),
        (input, maxLines, maxBytes, include, exclude) => {
          const def = definition({ maxLines, maxBytes }, include, exclude, {
            error: "error",
            upper: "ERROR",
          });
          const filter = compileFilter(def);
          const keeps = (text: string): boolean =>
            (filter.include.length === 0 || filter.include.some((r) => r.test(text))) &&
            !filter.exclude.some((r) => r.test(text));
          const batched = batchAll(new ChunkBatcher(def), input);
          const allRead = batched.flatMap((b) => b.read);
          expect(allRead.map((entry) => entry.line)).toEqual(input.map((entry) => entry.line));
          expect(batched.flatMap((b) => b.chunk.lines)).toEqual(
            input.map((entry) => entry.line.text).filter(keeps),
          );
          for (const { chunk, read } of batched) {
            expect(read.length).toBeGreaterThan(0);
            expect(chunk.lines.length).toBeLessThanOrEqual(maxLines);
            const bytes = read.reduce((sum, entry) => sum + entry.line.bytes, 0);
            expect(chunk.bytes).toBe(bytes);
            expect(bytes - read.at(-1)!.line.bytes).toBeLessThan(maxBytes);
            expect(new Set(read.map((entry) => entry.channel)).size).toBe(1);
            expect(chunk.channel).toBe(read[0]!.channel);
            expect(chunk.skipped ?? 0).toBe(read.length - chunk.lines.length);
            expect(chunk.matches).toEqual({
              error: chunk.lines.filter((text) => /error/.test(text)).length,
              upper: chunk.lines.filter((text) => /ERROR/.test(text)).length,
            });
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("chunk batcher (examples)", () => {
  it("completes a chunk at maxLines and hands the cursor of its last line", () => {
    const batcher = new ChunkBatcher(definition({ maxLines: 2, maxBytes: 1000 }));
    expect(batcher.add(line("a"), { at: 1 })).toBeUndefined();
    expect(batcher.holding).toBe(true);
    expect(batcher.add(line("b"), { at: 2 })).toEqual({
      type: "chunk",
      lines: ["a", "b"],
      bytes: 4,
      cursor: { at: 2 },
    });
    expect(batcher.holding).toBe(false);
    expect(batcher.flush()).toBeUndefined();
  });

  it("moves the cursor through skipped lines in chunks that may hold none", () => {
    const batcher = new ChunkBatcher(definition({ maxLines: 10, maxBytes: 10 }, [], ["^noise"]));
    expect(batcher.add(line("noise 1"), { at: 1 })).toBeUndefined();
    expect(batcher.add(line("noise 2"), { at: 2 })).toEqual({
      type: "chunk",
      lines: [],
      bytes: 16,
      cursor: { at: 2 },
      skipped: 2,
    });
  });

  it("reports cut lines, invalid bytes and every pattern, 0 included", () => {
    const batcher = new ChunkBatcher(
      definition({ maxLines: 2, maxBytes: 10_000 }, [], [], { error: "error", fatal: "fatal" }),
    );
    batcher.add({ text: "an error", bytes: 2000, cut: 1991, invalid: 0 }, { at: 1 });
    const chunk = batcher.add({ text: "\uFFFD", bytes: 2, cut: 0, invalid: 1 }, { at: 2 });
    expect(chunk).toMatchObject({
      lines: ["an error", "\uFFFD"],
      cut: { lines: 1, bytes: 1991 },
      invalidBytes: 1,
      matches: { error: 1, fatal: 0 },
    });
  });

  it("ends a chunk when the channel changes; a new line that fills a chunk waits for flush", () => {
    const batcher = new ChunkBatcher(definition({ maxLines: 1, maxBytes: 1000 }, [], ["^skip"]));
    expect(batcher.add(line("skip"), { at: 1 }, "stdout")).toBeUndefined();
    const first = batcher.add(line("err"), { at: 2 }, "stderr");
    expect(first).toMatchObject({ lines: [], skipped: 1, channel: "stdout", cursor: { at: 1 } });
    expect(batcher.ready).toBe(true);
    expect(batcher.flush()).toMatchObject({ lines: ["err"], channel: "stderr", cursor: { at: 2 } });
    expect(batcher.holding).toBe(false);
  });

  it("treats a pattern that does not compile as matching nothing instead of throwing", () => {
    const batcher = new ChunkBatcher(
      definition({ maxLines: 1, maxBytes: 1000 }, ["(unclosed"], [], { bad: "[" }),
    );
    expect(batcher.add(line("(unclosed"), { at: 1 })).toBeUndefined();
    expect(batcher.flush()).toEqual({
      type: "chunk",
      lines: [],
      bytes: 10,
      cursor: { at: 1 },
      skipped: 1,
      matches: { bad: 0 },
    });
  });
});
