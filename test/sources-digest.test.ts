/**
 * A source's digest: never over its token budget under the runtime's real estimator (a
 * character-ratio model and a real BPE tokenizer), every line when they all fit, a burst of
 * similar lines as one shape with its count, exact counts per named pattern, the recall action
 * for the range, and chunks the delivery did not read for it counted and named.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTokenEstimator } from "../src/providers/index.js";
import {
  checkSourceEntry,
  compilePatterns,
  countMatches,
  type DigestChunk,
  lineShape,
  renderSourceDigest,
} from "../src/sources/index.js";

const estimator = createTokenEstimator();
const MODELS = ["gpt-4o", "claude-sonnet-4-5"];

const definition = checkSourceEntry({
  id: "app-log",
  kind: "file",
  target: "logs/app.log",
  patterns: { error: "ERROR|FATAL", status_5xx: '" 5\\d\\d ', never: "NEVER-THERE" },
}).definition!;
const matchers = compilePatterns(definition);

/** Chunks numbered from `first`, with matches counted as the runner counts them. */
function chunksOf(groups: readonly (readonly string[])[], first = 1): DigestChunk[] {
  let offset = 0;
  return groups.map((lines, index) => {
    const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
    offset += bytes;
    return {
      n: first + index,
      lines,
      bytes,
      cursor: { offset },
      matches: countMatches(matchers, lines)!,
      at: "2025-01-01T00:00:00.000Z",
    };
  });
}

const accessLine = (i: number) =>
  `10.0.${i % 7}.${i % 250} - - [12/Mar/2025:10:${String(i % 60).padStart(2, "0")}:00] "GET /api/items/${i * 7} HTTP/1.1" 503 ${i * 13}`;

describe("renderSourceDigest", () => {
  it("never goes over its budget, whatever the lines and the budget", () => {
    const line = fc.oneof(
      fc.string({ maxLength: 120 }),
      fc.string({ unit: "grapheme", maxLength: 60 }),
      fc.nat(5_000).map(accessLine),
      fc.constantFrom("ERROR boom", "FATAL disk full at 0xdeadbeef", " ", ""),
      fc.string({ maxLength: 3_000 }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(line, { maxLength: 60 }), { minLength: 0, maxLength: 5 }),
        fc.integer({ min: 0, max: 1_500 }),
        fc.constantFrom(...MODELS),
        fc.integer({ min: 1, max: 1_000 }),
        (groups, budgetTokens, model, first) => {
          const estimate = (text: string) => estimator.estimate(model, text);
          const digest = renderSourceDigest({
            source: "app-log",
            definition,
            chunks: chunksOf(groups, first),
            budgetTokens,
            estimate,
          });
          expect(estimate(digest)).toBeLessThanOrEqual(budgetTokens);
          if (digest !== "") expect(digest.startsWith("Source app-log")).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("shows every line, in order, when they all fit", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.stringMatching(/^[^\n]{0,40}$/), { maxLength: 20 }), {
          minLength: 1,
          maxLength: 4,
        }),
        (groups) => {
          const chunks = chunksOf(groups, 7);
          const digest = renderSourceDigest({
            source: "app-log",
            definition,
            chunks,
            budgetTokens: 100_000,
            estimate: (text) => estimator.estimate("gpt-4o", text),
          });
          const body = digest.split("\n").slice(2, -1);
          expect(body).toEqual(
            chunks.flatMap((chunk) => [`--- chunk #${chunk.n} ---`, ...chunk.lines]),
          );
          expect(digest).not.toContain("not shown");
        },
      ),
    );
  });

  it("counts chunks not read for it (too much at once) and names them, never showing lines it does not have", () => {
    const chunks = chunksOf([
      ["ERROR first"],
      ["INFO a", "ERROR b", "INFO c"],
      ["INFO d", "INFO e"],
      ["FATAL last"],
    ]);
    // Chunks 2 and 3 were not read: their lines are absent, their counts kept.
    const unread = chunks.map((chunk) =>
      chunk.n === 2 || chunk.n === 3
        ? { ...chunk, lines: [], lineCount: chunk.lines.length }
        : chunk,
    );
    const digest = renderSourceDigest({
      source: "app-log",
      definition,
      chunks: unread,
      budgetTokens: 100_000,
      estimate: (text) => estimator.estimate("gpt-4o", text),
    });
    expect(digest).toContain("chunks 1-4, 7 lines");
    expect(digest).toContain("Matches: error 3,");
    expect(digest).toContain(
      "Not read for this digest (too much at once): 2 of these chunks (#2-#3), 5 lines",
    );
    expect(digest).toContain("ERROR first");
    expect(digest).toContain("FATAL last");
    expect(digest).not.toContain("--- chunk");
    for (const line of ["INFO a", "ERROR b", "INFO d"]) expect(digest).not.toContain(line);
  });

  it("shows a burst of 503s as one shape with its count, rarer lines first", () => {
    const burst = Array.from({ length: 500 }, (_, i) => accessLine(i));
    const chunks = chunksOf([
      burst.slice(0, 250),
      ["ERROR db connection lost to 10.1.2.3:5432", ...burst.slice(250), "INFO done"],
    ]);
    const digest = renderSourceDigest({
      source: "app-log",
      definition,
      chunks,
      budgetTokens: 400,
      estimate: (text) => estimator.estimate("gpt-4o", text),
    });
    expect(new Set(burst.map(lineShape)).size).toBe(1);
    const relevant = digest.split("\n").filter((line) => /^\d+x #\d+: /.test(line));
    expect(relevant).toEqual([
      "1x #2: ERROR db connection lost to 10.1.2.3:5432",
      `500x #1: ${burst[0]}`,
    ]);
    expect(digest).toMatch(/^Source app-log \(file logs\/app\.log\): chunks 1-2, 502 lines, /);
    expect(digest).toContain("#2: INFO done");
    expect(digest).toContain("earlier lines not shown");
  });

  it("counts each named pattern exactly and ends with the recall action for the range", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.oneof(fc.constantFrom("ERROR a", "FATAL b", "x"), fc.nat().map(accessLine)), {
            maxLength: 40,
          }),
          { minLength: 1, maxLength: 4 },
        ),
        fc.integer({ min: 40, max: 2_000 }),
        (groups, budgetTokens) => {
          const chunks = chunksOf(groups, 12);
          const lines = groups.flat();
          const count = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).length;
          const digest = renderSourceDigest({
            source: "app-log",
            definition,
            chunks,
            budgetTokens: Math.max(budgetTokens, 200),
            estimate: (text) => estimator.estimate("claude-sonnet-4-5", text),
          });
          expect(digest.split("\n")[1]).toBe(
            `Matches: error ${count(/ERROR|FATAL/)}, status_5xx ${count(/" 5\d\d /)}, never 0`,
          );
          const last = 11 + groups.length;
          expect(digest.split("\n").at(-1)).toBe(
            `Read any range in full: <action type="internal" mode="sync" id="r1">{"name":"source.recall","parameters":{"source":"app-log","from_chunk":12,"to_chunk":${last}}}</action>`,
          );
        },
      ),
    );
  });

  it("says where the range starts and ends", () => {
    const chunks = chunksOf([["a"], ["b"]], 5);
    const render = (from?: { offset: number }) =>
      renderSourceDigest({
        source: "app-log",
        definition,
        chunks,
        budgetTokens: 1_000,
        estimate: (text) => estimator.estimate("gpt-4o", text),
        ...(from ? { from } : {}),
      }).split("\n")[0];
    expect(render()).toMatch(/cursor after chunk 4 -> offset=4$/);
    expect(render({ offset: 2 })).toMatch(/cursor offset=2 -> offset=4$/);
  });

  it("shows a file's cursor by its offset first, its content hash shortened, and counts in words", () => {
    const head = "f7e0549c695e512765aa54437b20fdeb0ed69b2854255a037a919265f5a12d62";
    const [chunk] = chunksOf([["one line"]], 3);
    const header = renderSourceDigest({
      source: "app-log",
      definition,
      chunks: [{ ...chunk!, cursor: { dev: "65024", head, ino: "2933457", offset: 84 } }],
      budgetTokens: 1_000,
      estimate: (text) => estimator.estimate("gpt-4o", text),
    }).split("\n")[0];
    expect(header).toMatch(/: chunk 3, 1 line, /);
    expect(header).toMatch(/-> offset=84 dev=65024 head=f7e0549c695e… ino=2933457$/);
  });
});
