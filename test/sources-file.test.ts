import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FollowedFile, lastLineStart } from "../src/sources/followed-file.js";
import { createFileSource, parseFileCursor, type SourceDefinition } from "../src/sources/index.js";
import {
  chunksOf,
  lastCursor,
  linesOf,
  startSource,
  summarize,
  testDefinition,
} from "./support/source-recorder.js";

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-file-source-"));
  path = join(dir, "app.log");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Whether this process holds `file` open (a descriptor in /proc/self/fd points at it). */
function openHere(file: string): boolean {
  return readdirSync("/proc/self/fd").some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  });
}

function fileSource(overrides: Partial<SourceDefinition> = {}) {
  return createFileSource(testDefinition("file", path, overrides), { path, pollMs: 10 });
}

describe("file source: following one file", () => {
  it("delivers whole lines; a partial last line waits for its newline, the cursor at its start", async () => {
    writeFileSync(path, "one\ntwo\nthr");
    const run = startSource(fileSource());
    await run.until("one and two", (all) => linesOf(all).length === 2);
    expect(linesOf(run.emissions)).toEqual(["one", "two"]);
    expect(parseFileCursor(lastCursor(run.emissions)!)?.offset).toBe(8);
    appendFileSync(path, "ee\nfour\n");
    await run.until("three and four", (all) => linesOf(all).length === 4);
    await run.stop();
    expect(linesOf(run.emissions)).toEqual(["one", "two", "three", "four"]);
    const cursor = parseFileCursor(lastCursor(run.emissions)!)!;
    const info = statSync(path, { bigint: true });
    expect(cursor).toMatchObject({ offset: 19, dev: String(info.dev), ino: String(info.ino) });
    expect(chunksOf(run.emissions).reduce((sum, chunk) => sum + chunk.bytes, 0)).toBe(19);
  });

  it("resumes from a logged cursor: nothing delivered twice, nothing lost", async () => {
    writeFileSync(path, "a\nb\n");
    const first = startSource(fileSource());
    await first.until("a and b", (all) => linesOf(all).length === 2);
    await first.stop();
    appendFileSync(path, "c\nd\n");
    const second = startSource(fileSource(), { cursor: lastCursor(first.emissions)! });
    await second.until("c and d", (all) => linesOf(all).length === 2);
    await second.stop();
    expect(summarize(second.emissions)).toEqual(["c", "d"]);
  });

  it('skips what is there with `from: "end"` on a first run, logging where it began', async () => {
    writeFileSync(path, "old 1\nold 2\npart");
    const run = startSource(fileSource({ options: { from: "end" } }));
    await run.until("the skip logged", (all) => all.length === 1);
    expect(run.emissions[0]).toMatchObject({ type: "chunk", lines: [], bytes: 12 });
    appendFileSync(path, "ial\nnew\n");
    await run.until("partial and new", (all) => linesOf(all).length === 2);
    await run.stop();
    expect(linesOf(run.emissions)).toEqual(["partial", "new"]);
    // A restart before any line arrived resumes where it began, losing nothing written meanwhile.
    const again = startSource(fileSource({ options: { from: "end" } }), {
      cursor: chunksOf(run.emissions)[0]!.cursor,
    });
    await again.until("partial and new again", (all) => linesOf(all).length === 2);
    await again.stop();
    expect(summarize(again.emissions)).toEqual(["partial", "new"]);
  });

  it('begins "from the end" at the start of the last partial line', async () => {
    const cases: [string, number][] = [
      ["old 1\nold 2\npart", 12],
      ["old 1\nold 2\n", 12],
      ["no newline at all", 0],
      ["", 0],
    ];
    for (const [content, start] of cases) {
      writeFileSync(path, content);
      const file = await FollowedFile.open(path, 1024);
      expect(await lastLineStart(file)).toBe(start);
      await file.close();
    }
  });

  it("waits for a file that does not exist yet, saying so once", async () => {
    const run = startSource(fileSource());
    await run.until("the waiting notice", (all) => all.length === 1);
    expect(run.emissions[0]).toMatchObject({ type: "notice", code: "source.waiting" });
    writeFileSync(path, "hello\n");
    await run.until("hello", (all) => linesOf(all).length === 1);
    await run.stop();
    expect(summarize(run.emissions)).toEqual(["[notice source.waiting]", "hello"]);
  });

  it("waits for a directory that does not exist yet too", async () => {
    path = join(dir, "later", "app.log");
    const run = startSource(fileSource());
    await run.until("the waiting notice", (all) => all.length === 1);
    mkdirSync(join(dir, "later"));
    writeFileSync(path, "x\n");
    await run.until("x", (all) => linesOf(all).length === 1);
    await run.stop();
  });

  it("filters lines and counts patterns, the cursor moving through skipped lines", async () => {
    writeFileSync(path, "debug a\nerror b\ninfo c\nerror d\ndebug e\n");
    const run = startSource(
      fileSource({ exclude: ["^debug"], patterns: { error: "^error", warn: "^warn" } }),
    );
    const size = statSync(path).size;
    await run.until("the whole file", (all) => lastCursor(all)?.offset === size);
    await run.stop();
    const chunks = chunksOf(run.emissions);
    expect(chunks.flatMap((chunk) => chunk.lines)).toEqual(["error b", "info c", "error d"]);
    expect(chunks.reduce((sum, chunk) => sum + (chunk.skipped ?? 0), 0)).toBe(2);
    expect(chunks.reduce((sum, chunk) => sum + chunk.matches!.error!, 0)).toBe(2);
    expect(chunks.every((chunk) => chunk.matches!.warn === 0)).toBe(true);
  });
});

describe("file source: what it cannot read", () => {
  it("fails with source.unreadable for a directory, saying what to do", async () => {
    mkdirSync(path);
    const run = startSource(fileSource());
    await run.done;
    expect(run.emissions).toEqual([
      expect.objectContaining({
        type: "failed",
        code: "source.unreadable",
        message: expect.stringContaining("use a dataset source for a directory"),
      }),
    ]);
  });

  it.skipIf(process.getuid?.() === 0)(
    "fails with source.unreadable on permission denied (skipped as root: root reads any file)",
    async () => {
      writeFileSync(path, "secret\n", { mode: 0o000 });
      const run = startSource(fileSource());
      await run.done;
      expect(run.emissions).toEqual([
        expect.objectContaining({
          type: "failed",
          code: "source.unreadable",
          message: expect.stringContaining("permission denied"),
        }),
      ]);
    },
  );

  it("fails with source.invalid-options for options it cannot take", async () => {
    const run = startSource(fileSource({ options: { from: "middle" } }));
    await run.done;
    expect(run.emissions).toEqual([
      expect.objectContaining({
        type: "failed",
        code: "source.invalid-options",
        message: expect.stringContaining("options.from"),
      }),
    ]);
  });

  it("stops when aborted while waiting, and returns with the file closed", async () => {
    writeFileSync(path, "a\n");
    const run = startSource(fileSource());
    await run.until("a", (all) => linesOf(all).length === 1);
    expect(openHere(path)).toBe(true);
    await run.stop();
    expect(openHere(path)).toBe(false);
    appendFileSync(path, "b\n");
    expect(linesOf(run.emissions)).toEqual(["a"]);
  });
});
