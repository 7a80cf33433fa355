import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileSource, parseFileCursor, type SourceEmission } from "../src/sources/index.js";
import {
  lastCursor,
  linesOf,
  startSource,
  summarize,
  testDefinition,
} from "./support/source-recorder.js";

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-file-rotation-"));
  path = join(dir, "app.log");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function fileSource() {
  return createFileSource(testDefinition("file", path), { path, pollMs: 10 });
}

function rotations(emissions: readonly SourceEmission[]): string[] {
  return emissions.flatMap((emission) => (emission.type === "rotated" ? [emission.reason] : []));
}

function inode(file: string): string {
  return String(statSync(file, { bigint: true }).ino);
}

describe("file source: rotation while running", () => {
  it("rename + create mid-line: finishes the old file (the writer's late lines too), then the new from 0", async () => {
    writeFileSync(path, "a\nb\npart");
    const run = startSource(fileSource());
    await run.until("a and b", (all) => linesOf(all).length === 2);
    renameSync(path, `${path}.1`);
    appendFileSync(`${path}.1`, "ial\nlate\n");
    writeFileSync(path, "new 1\n");
    await run.until("new 1", (all) => linesOf(all).includes("new 1"));
    appendFileSync(path, "new 2\n");
    await run.until("new 2", (all) => linesOf(all).includes("new 2"));
    await run.stop();
    expect(summarize(run.emissions)).toEqual([
      "a",
      "b",
      "partial",
      "late",
      "[rotated renamed]",
      "new 1",
      "new 2",
    ]);
    const rotated = run.emissions.find((emission) => emission.type === "rotated")!;
    expect(parseFileCursor(rotated.cursor)).toMatchObject({ offset: 0, ino: inode(path) });
    expect(parseFileCursor(lastCursor(run.emissions)!)).toMatchObject({
      offset: 12,
      ino: inode(path),
    });
  });

  it("copytruncate mid-line: delivers the held partial line, then reads the truncated file from 0", async () => {
    writeFileSync(path, "a\nb\npar");
    const run = startSource(fileSource());
    await run.until("a and b", (all) => linesOf(all).length === 2);
    copyFileSync(path, `${path}.1`);
    truncateSync(path, 0);
    appendFileSync(path, "rest of it\nc\n");
    await run.until("c", (all) => linesOf(all).includes("c"));
    await run.stop();
    expect(summarize(run.emissions)).toEqual([
      "a",
      "b",
      "par",
      "[rotated truncated]",
      "rest of it",
      "c",
    ]);
    expect(parseFileCursor(lastCursor(run.emissions)!)?.offset).toBe(13);
  });

  it("deleted: reads what was written before, says so once, then follows the file created again", async () => {
    writeFileSync(path, "a\nb");
    const run = startSource(fileSource());
    await run.until("a", (all) => linesOf(all).length === 1);
    unlinkSync(path);
    await run.until("the deletion", (all) => rotations(all).includes("deleted"));
    writeFileSync(path, "c\n");
    await run.until("c", (all) => linesOf(all).includes("c"));
    await run.stop();
    expect(summarize(run.emissions)).toEqual([
      "a",
      "b",
      "[rotated deleted]",
      "[rotated recreated]",
      "c",
    ]);
  });

  it("deleted and created again at once: both rotations, nothing of either file lost", async () => {
    writeFileSync(path, "a\n");
    const run = startSource(fileSource());
    await run.until("a", (all) => linesOf(all).length === 1);
    appendFileSync(path, "b\n");
    writeFileSync(`${path}.tmp`, "c\n");
    unlinkSync(path);
    renameSync(`${path}.tmp`, path);
    await run.until("c", (all) => linesOf(all).includes("c"));
    await run.stop();
    expect(summarize(run.emissions)).toEqual([
      "a",
      "b",
      "[rotated deleted]",
      "[rotated recreated]",
      "c",
    ]);
  });
});

describe("file source: truncation the reader had not seen yet", () => {
  /** A file source whose first chunk's `emit` waits until the test releases it. */
  function heldSource(maxLines: number) {
    let reached: () => void = () => {};
    let release: () => void = () => {};
    const atEmit = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first = true;
    const source = createFileSource(testDefinition("file", path, { batching: { maxLines } }), {
      path,
      pollMs: 10,
    });
    const run = startSource(source, {
      onEmit: async () => {
        if (!first) return;
        first = false;
        reached();
        await held;
      },
    });
    return { run, atEmit, release };
  }

  it("truncated and written past the read position while a chunk was on its way: read again from 0, no fragment", async () => {
    writeFileSync(path, "a\nb\n");
    // The chunk of a and b is full at b: the source reads on as soon as its emit resolves.
    const { run, atEmit, release } = heldSource(2);
    await atEmit;
    truncateSync(path, 0);
    appendFileSync(path, "cccccc\ndddddd\n");
    release();
    await run.until("dddddd", (all) => linesOf(all).includes("dddddd"));
    await run.stop();
    expect(summarize(run.emissions)).toEqual(["a", "b", "[rotated truncated]", "cccccc", "dddddd"]);
  });

  it("copytruncate, then renamed away before the reader looked: the truncated file's new lines, then the new file", async () => {
    writeFileSync(path, "a long line 1\na long line 2\n");
    const { run, atEmit, release } = heldSource(2);
    await atEmit;
    copyFileSync(path, `${path}.1`);
    truncateSync(path, 0);
    appendFileSync(path, "c\nd\n");
    renameSync(path, `${path}.2`);
    writeFileSync(path, "e\n");
    release();
    await run.until("e", (all) => linesOf(all).includes("e"));
    await run.stop();
    expect(summarize(run.emissions)).toEqual([
      "a long line 1",
      "a long line 2",
      "[rotated truncated]",
      "c",
      "d",
      "[rotated renamed]",
      "e",
    ]);
  });
});

describe("file source: rotation while stopped", () => {
  it("resumes in the rotated old file found by its inode, then the new one", async () => {
    writeFileSync(path, "a\n");
    const first = startSource(fileSource());
    await first.until("a", (all) => linesOf(all).length === 1);
    await first.stop();
    appendFileSync(path, "b\nunfinished");
    renameSync(path, `${path}.1`);
    writeFileSync(path, "c\n");
    const second = startSource(fileSource(), { cursor: lastCursor(first.emissions)! });
    await second.until("c", (all) => linesOf(all).includes("c"));
    await second.stop();
    expect(summarize(second.emissions)).toEqual(["b", "unfinished", "[rotated renamed]", "c"]);
  });

  it("reads the new file from 0 when the old one is gone, saying so", async () => {
    writeFileSync(path, "a\n");
    const first = startSource(fileSource());
    await first.until("a", (all) => linesOf(all).length === 1);
    await first.stop();
    // The new file exists before the old is deleted, so it cannot take the old inode.
    writeFileSync(`${path}.tmp`, "z\n");
    unlinkSync(path);
    renameSync(`${path}.tmp`, path);
    const second = startSource(fileSource(), { cursor: lastCursor(first.emissions)! });
    await second.until("z", (all) => linesOf(all).includes("z"));
    await second.stop();
    expect(summarize(second.emissions)).toEqual(["[rotated recreated]", "z"]);
    const rotated = second.emissions[0]!;
    expect(rotated.type === "rotated" && rotated.detail).toContain("is gone");
  });

  it("reads from 0 when the file at the cursor's inode was truncated while stopped", async () => {
    writeFileSync(path, "a long first line\n");
    const first = startSource(fileSource());
    await first.until("the line", (all) => linesOf(all).length === 1);
    await first.stop();
    truncateSync(path, 0);
    appendFileSync(path, "short\n");
    const second = startSource(fileSource(), { cursor: lastCursor(first.emissions)! });
    await second.until("short", (all) => linesOf(all).includes("short"));
    await second.stop();
    expect(summarize(second.emissions)).toEqual(["[rotated truncated]", "short"]);
  });

  it("notices a file rewritten in place past the cursor (same inode, other first bytes)", async () => {
    writeFileSync(path, "first\n");
    const first = startSource(fileSource());
    await first.until("first", (all) => linesOf(all).length === 1);
    await first.stop();
    truncateSync(path, 0);
    appendFileSync(path, "other content, longer than before\n");
    const second = startSource(fileSource(), { cursor: lastCursor(first.emissions)! });
    await second.until("the other content", (all) => linesOf(all).length === 1);
    await second.stop();
    expect(summarize(second.emissions)).toEqual([
      "[rotated truncated]",
      "other content, longer than before",
    ]);
  });

  it("waits for the file when it is gone at resume, then reads the new one from 0", async () => {
    writeFileSync(path, "a\n");
    const first = startSource(fileSource());
    await first.until("a", (all) => linesOf(all).length === 1);
    await first.stop();
    unlinkSync(path);
    const second = startSource(fileSource(), { cursor: lastCursor(first.emissions)! });
    await second.until("the waiting notice", (all) => all.length === 1);
    writeFileSync(path, "b\n");
    await second.until("b", (all) => linesOf(all).includes("b"));
    await second.stop();
    expect(summarize(second.emissions)).toEqual([
      "[notice source.waiting]",
      "[rotated recreated]",
      "b",
    ]);
  });
});
