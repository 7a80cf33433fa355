import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  compareDatasetPaths,
  createDatasetSource,
  type SourceCursor,
  type SourceDefinition,
  type SourceEmission,
} from "../src/sources/index.js";
import {
  chunksOf,
  lastCursor,
  linesOf,
  summarize,
  testDefinition,
} from "./support/source-recorder.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-dataset-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeTree(root: string, files: Record<string, string>): void {
  for (const [relative, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, relative)), { recursive: true });
    writeFileSync(join(root, relative), content);
  }
}

/** The lines of a complete file: split on \n, a last line without newline included. */
function expectedLines(content: string): string[] {
  if (content === "") return [];
  const lines = content.split("\n");
  if (content.endsWith("\n")) lines.pop();
  return lines;
}

/**
 * Runs a dataset source to its end, or until it has accepted `accept` emissions: the runner's
 * `emit` then rejects, as a runner that stopped (a crash) does. Resolves with what was accepted.
 */
async function runDataset(
  definition: SourceDefinition,
  path: string,
  cursor?: SourceCursor,
  accept = Number.POSITIVE_INFINITY,
): Promise<SourceEmission[]> {
  const accepted: SourceEmission[] = [];
  await createDatasetSource(definition, { path }).run({
    cursor,
    signal: new AbortController().signal,
    emit: async (emission) => {
      if (accepted.length >= accept) throw new Error("the runner stopped");
      accepted.push(emission);
    },
  });
  return accepted;
}

const tree: Record<string, string> = {
  "b.txt": "b1\nb2\nb3 no newline",
  "a/z.txt": "az1\naz2\n",
  "a.txt": "a1\n",
  "a/b/deep.txt": "deep1\n\ndeep3\n",
  "c/empty.txt": "",
  "c/ü.txt": "ü1\r\nü2\n",
};
const order = ["a/b/deep.txt", "a/z.txt", "a.txt", "b.txt", "c/empty.txt", "c/ü.txt"];

describe("dataset source", () => {
  it("reads a directory file by file in sorted path order, then says it is exhausted", async () => {
    writeTree(dir, tree);
    const emissions = await runDataset(
      testDefinition("dataset", dir, { batching: { maxLines: 2 } }),
      dir,
    );
    const expected = order.flatMap((file) => expectedLines(tree[file]!.replace(/\r\n/g, "\n")));
    expect(linesOf(emissions)).toEqual(expected);
    expect(emissions.at(-1)).toEqual({
      type: "exhausted",
      cursor: { file: "c/ü.txt", offset: 9, files_done: 5 },
    });
    // Chunks never span two files.
    for (const chunk of chunksOf(emissions)) expect(typeof chunk.cursor.file).toBe("string");
    expect(order.slice().sort(compareDatasetPaths)).toEqual(order);
  });

  it("is exhausted at once in an empty directory", async () => {
    expect(await runDataset(testDefinition("dataset", dir), dir)).toEqual([
      { type: "exhausted", cursor: { file: "", offset: 0, files_done: 0 } },
    ]);
  });

  it("reads a single file, its last line without a newline included", async () => {
    const path = join(dir, "one.jsonl");
    writeFileSync(path, '{"a":1}\n{"b":2}');
    const emissions = await runDataset(testDefinition("dataset", path), path);
    expect(summarize(emissions)).toEqual(['{"a":1}', '{"b":2}', "[exhausted]"]);
    expect(lastCursor(emissions)).toEqual({ file: "one.jsonl", offset: 15, files_done: 0 });
  });

  it("keeps only files matching options.glob and options.extensions; follows links to files", async () => {
    writeTree(dir, { "logs/x.jsonl": "x\n", "logs/y.txt": "y\n", "other/z.jsonl": "z\n" });
    symlinkSync(join(dir, "logs", "x.jsonl"), join(dir, "logs", "link.jsonl"));
    symlinkSync(dir, join(dir, "logs", "loop"));
    const definition = testDefinition("dataset", dir, {
      options: { glob: "logs/**", extensions: [".jsonl"] },
    });
    expect(summarize(await runDataset(definition, dir))).toEqual(["x", "x", "[exhausted]"]);
  });

  it("fails with source.unreadable for a path that does not exist", async () => {
    const missing = join(dir, "nope");
    const emissions = await runDataset(testDefinition("dataset", missing), missing);
    expect(emissions).toEqual([
      expect.objectContaining({
        type: "failed",
        code: "source.unreadable",
        message: expect.stringContaining("does not exist"),
      }),
    ]);
  });

  it("resumes after a crash at any chunk boundary with every line exactly once (property)", async () => {
    writeTree(dir, tree);
    const all = order.flatMap((file) => expectedLines(tree[file]!.replace(/\r\n/g, "\n")));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }),
        fc.subarray(["^a", "1$", "^$"]),
        async (maxLines, crashes, exclude) => {
          const definition = testDefinition("dataset", dir, { batching: { maxLines }, exclude });
          const kept = all.filter(
            (line) => !exclude.some((pattern) => new RegExp(pattern).test(line)),
          );
          const delivered: string[] = [];
          let cursor: SourceCursor | undefined;
          let exhausted = false;
          for (const accept of [...crashes, Number.POSITIVE_INFINITY]) {
            const emissions = await runDataset(definition, dir, cursor, accept);
            delivered.push(...linesOf(emissions));
            cursor = lastCursor(emissions) ?? cursor;
            if (emissions.some((emission) => emission.type === "exhausted")) {
              exhausted = true;
              break;
            }
          }
          expect(exhausted).toBe(true);
          expect(delivered).toEqual(kept);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("resumes from any chunk's cursor with exactly the lines after it, for any tree (property)", async () => {
    const fileArb = fc.record({
      path: fc.constantFrom("a", "b", "a/a", "a/c", "a.b", "c/d/e", "z"),
      lines: fc.array(fc.constantFrom("x", "yy", "", "zzz zzz"), { maxLength: 5 }),
      newline: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fileArb, { maxLength: 5 }), fc.nat(), async (files, pick) => {
        const root = mkdtempSync(join(dir, "tree-"));
        const written = new Map<string, string>();
        for (const file of files) {
          // A path may not be both a file and a directory: skip one that clashes.
          const clash = [...written.keys()].some(
            (other) => other.startsWith(`${file.path}/`) || file.path.startsWith(`${other}/`),
          );
          if (clash) continue;
          const content =
            file.lines.join("\n") + (file.newline && file.lines.length > 0 ? "\n" : "");
          written.set(file.path, content);
        }
        writeTree(root, Object.fromEntries(written));
        const definition = testDefinition("dataset", root, { batching: { maxLines: 2 } });
        const full = await runDataset(definition, root);
        const expected = [...written.keys()]
          .sort(compareDatasetPaths)
          .flatMap((path) => expectedLines(written.get(path)!));
        expect(linesOf(full)).toEqual(expected);
        const chunks = chunksOf(full);
        if (chunks.length === 0) return;
        const at = pick % chunks.length;
        const resumed = await runDataset(definition, root, chunks[at]!.cursor);
        expect(linesOf(resumed)).toEqual(chunks.slice(at + 1).flatMap((chunk) => chunk.lines));
        expect(resumed.at(-1)?.type).toBe("exhausted");
      }),
      { numRuns: 80 },
    );
  });
});
