import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AnyTool, ToolContext } from "../src/actions/index.js";
import {
  builtinTools,
  type FsReadBytesResult,
  type FsReadLinesResult,
} from "../src/tools/index.js";

function context(): ToolContext {
  return { actionId: "a", attempt: 1, signal: new AbortController().signal, progress: () => {} };
}

let workspace: string;
let tools: AnyTool[];

function read(parameters: unknown): Promise<FsReadBytesResult & FsReadLinesResult> {
  const tool = tools.find((candidate) => candidate.name === "fs.read")!;
  return Promise.resolve(tool.execute(tool.parameters.parse(parameters), context())) as Promise<
    FsReadBytesResult & FsReadLinesResult
  >;
}

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "spool-read-"));
  tools = builtinTools({ workspace, limits: { readBytes: 64 } });
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe("fs.read", () => {
  it("reads a whole small file with its size", async () => {
    await writeFile(path.join(workspace, "a.txt"), "héllo\nworld\n");
    expect(await read({ path: "a.txt" })).toEqual({
      path: "a.txt",
      size: 13,
      offset: 0,
      content: "héllo\nworld\n",
      truncated: false,
      nextOffset: null,
    });
  });

  it("cuts a file over the cap, flags it and says where to read on", async () => {
    const text = "x".repeat(100);
    await writeFile(path.join(workspace, "big.txt"), text);
    const first = await read({ path: "big.txt" });
    expect(first).toMatchObject({ size: 100, truncated: true, nextOffset: 64 });
    expect(first.content).toHaveLength(64);
    const rest = await read({ path: "big.txt", offset: first.nextOffset });
    expect(rest).toMatchObject({ offset: 64, content: "x".repeat(36), nextOffset: null });
  });

  it("reads a byte range and never splits a character", async () => {
    await writeFile(path.join(workspace, "u.txt"), "aé€b");
    // "é" is bytes 1-2, "€" bytes 3-5: offset 2 falls inside "é", length 3 ends inside "€".
    const range = await read({ path: "u.txt", offset: 2, length: 3 });
    expect(range.offset).toBe(3);
    expect(range.content).toBe("€");
    expect(range.nextOffset).toBe(6);
    expect(range.truncated).toBe(false);
  });

  it("reads a line range, with the line to read on from", async () => {
    await writeFile(path.join(workspace, "l.txt"), "one\ntwo\nthree\nfour");
    expect(await read({ path: "l.txt", startLine: 2, endLine: 3 })).toEqual({
      path: "l.txt",
      size: 18,
      startLine: 2,
      endLine: 3,
      content: "two\nthree\n",
      truncated: false,
      nextLine: 4,
    });
    expect(await read({ path: "l.txt", startLine: 4 })).toMatchObject({
      content: "four",
      endLine: 4,
      nextLine: null,
    });
  });

  it("stops a line range at the cap on a whole line", async () => {
    const lines = Array.from(
      { length: 20 },
      (_, index) => `line ${String(index + 1).padStart(2, "0")}`,
    );
    await writeFile(path.join(workspace, "many.txt"), `${lines.join("\n")}\n`);
    const result = await read({ path: "many.txt", startLine: 1 });
    // Each line is 8 bytes: 64 bytes hold exactly 8 of them.
    expect(result).toMatchObject({ endLine: 8, truncated: true, nextLine: 9 });
    expect(result.content).toBe(`${lines.slice(0, 8).join("\n")}\n`);
  });

  it("cuts a single line longer than the cap", async () => {
    await writeFile(path.join(workspace, "wide.txt"), `${"y".repeat(500)}\nnext\n`);
    const result = await read({ path: "wide.txt", startLine: 1, endLine: 2 });
    expect(result).toMatchObject({ endLine: 1, truncated: true, nextLine: 2 });
    expect(result.content).toBe("y".repeat(64));
  });

  it("refuses a binary file with a clear message", async () => {
    await writeFile(
      path.join(workspace, "image.png"),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]),
    );
    await expect(read({ path: "image.png" })).rejects.toMatchObject({
      code: "tool.binary-file",
      message: expect.stringContaining("`image.png` looks like a binary file"),
    });
  });

  it("refuses a directory, pointing at fs.list", async () => {
    await expect(read({ path: "." })).rejects.toMatchObject({
      code: "tool.is-directory",
      message: expect.stringContaining("fs.list"),
    });
  });

  it("rejects mixing byte and line ranges at validation", () => {
    const tool = tools.find((candidate) => candidate.name === "fs.read")!;
    const parsed = tool.parameters.safeParse({ path: "a", offset: 1, startLine: 2 });
    expect(parsed.success).toBe(false);
  });
});
