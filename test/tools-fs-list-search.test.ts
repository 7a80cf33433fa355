import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AnyTool, ToolContext } from "../src/actions/index.js";
import { builtinTools, createGlobMatcher, type ToolLimits } from "../src/tools/index.js";

function context(signal = new AbortController().signal): ToolContext {
  return { actionId: "a", attempt: 1, signal, progress: () => {} };
}

let workspace: string;

async function call(
  name: string,
  parameters: unknown,
  limits: Partial<ToolLimits> = {},
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const tools: AnyTool[] = builtinTools({ workspace, limits });
  const tool = tools.find((candidate) => candidate.name === name)!;
  return (await tool.execute(tool.parameters.parse(parameters), context(signal))) as Record<
    string,
    unknown
  >;
}

async function put(relative: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(path.join(workspace, relative)), { recursive: true });
  await writeFile(path.join(workspace, relative), content);
}

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "spool-list-"));
  await put("README.md", "# Demo\nneedle in the readme\n");
  await put("src/a.ts", "const needle = 1;\nconst other = 2;\n");
  await put("src/deep/b.ts", "// NEEDLE upper\nneedle();\n");
  await put("src/deep/c.js", "needle.js\n");
  await put("bin/tool.bin", Buffer.from([0, 1, 2, 110, 101, 101, 100, 108, 101]));
  await put("node_modules/dep/index.ts", "needle in a dependency\n");
  await put(".git/HEAD", "needle in git\n");
  await put(".spool/log.txt", "needle in spool\n");
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe("fs.list", () => {
  it("lists one folder sorted by name, with types and file sizes", async () => {
    await symlink("README.md", path.join(workspace, "link.md"));
    const result = await call("fs.list", {});
    expect(result).toEqual({
      path: ".",
      truncated: false,
      entries: [
        { path: ".git", type: "directory" },
        { path: ".spool", type: "directory" },
        { path: "README.md", type: "file", size: 28 },
        { path: "bin", type: "directory" },
        { path: "link.md", type: "symlink" },
        { path: "node_modules", type: "directory" },
        { path: "src", type: "directory" },
      ],
    });
  });

  it("walks recursively without entering .git, node_modules or .spool, honouring depth and glob", async () => {
    const all = await call("fs.list", { recursive: true });
    const paths = (all.entries as { path: string }[]).map((entry) => entry.path);
    expect(paths).toContain("src/deep/b.ts");
    expect(paths).toContain("node_modules");
    expect(paths.some((entry) => entry.startsWith("node_modules/"))).toBe(false);
    expect(paths.some((entry) => entry.startsWith(".git/"))).toBe(false);

    const shallow = await call("fs.list", { path: "src", recursive: true, depth: 1 });
    expect((shallow.entries as { path: string }[]).map((entry) => entry.path)).toEqual([
      "src/a.ts",
      "src/deep",
    ]);

    const typescript = await call("fs.list", { recursive: true, glob: "*.ts" });
    expect((typescript.entries as { path: string }[]).map((entry) => entry.path)).toEqual([
      "src/a.ts",
      "src/deep/b.ts",
    ]);
  });

  it("caps the number of entries and flags it", async () => {
    const result = await call("fs.list", { recursive: true }, { listEntries: 3 });
    expect(result.entries).toHaveLength(3);
    expect(result.truncated).toBe(true);
  });

  it("says to use fs.read when given a file", async () => {
    await expect(call("fs.list", { path: "README.md" })).rejects.toMatchObject({
      code: "tool.not-directory",
      message: expect.stringContaining("fs.read"),
    });
  });
});

describe("fs.search", () => {
  it("finds a literal string as path:line:text, skipping binaries and tool folders", async () => {
    const result = await call("fs.search", { pattern: "needle" });
    expect(result.matches).toEqual([
      "README.md:2:needle in the readme",
      "src/a.ts:1:const needle = 1;",
      "src/deep/b.ts:2:needle();",
      "src/deep/c.js:1:needle.js",
    ]);
    expect(result.truncated).toBe(false);
    expect(result.filesSkipped).toBe(1);
  });

  it("matches a regular expression, case-insensitively, within a glob", async () => {
    const result = await call("fs.search", {
      pattern: "^(//\\s*)?needle",
      regex: true,
      caseSensitive: false,
      path: "src",
      glob: "**/*.ts",
    });
    expect(result.matches).toEqual([
      "src/deep/b.ts:1:// NEEDLE upper",
      "src/deep/b.ts:2:needle();",
    ]);
  });

  it("caps matches and flags it", async () => {
    const result = await call("fs.search", { pattern: "needle", maxResults: 2 });
    expect(result.matches).toHaveLength(2);
    expect(result.truncated).toBe(true);
  });

  it("skips files over the per-file cap", async () => {
    await put("huge.txt", `${"z".repeat(200)}\nneedle\n`);
    const result = await call(
      "fs.search",
      { pattern: "needle", glob: "huge.txt" },
      { searchFileBytes: 100 },
    );
    expect(result).toMatchObject({ matches: [], filesSkipped: 1, filesSearched: 0 });
  });

  it("refuses an invalid regular expression with the reason", async () => {
    await expect(call("fs.search", { pattern: "(unclosed", regex: true })).rejects.toMatchObject({
      code: "tool.bad-pattern",
      message: expect.stringContaining("set regex to false"),
    });
  });

  it("stops at once when its signal is aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      call("fs.search", { pattern: "needle" }, {}, controller.signal),
    ).rejects.toMatchObject({
      code: "tool.aborted",
      retryable: true,
    });
  });
});

describe("globs", () => {
  it.each([
    ["*.ts", "src/deep/b.ts", true],
    ["*.ts", "src/deep/c.js", false],
    ["src/*.ts", "src/deep/b.ts", false],
    ["src/**/*.ts", "src/a.ts", true],
    ["src/**/*.ts", "src/deep/b.ts", true],
    ["*.{ts,js}", "c.js", true],
    ["[ab].ts", "b.ts", true],
    ["[!ab].ts", "b.ts", false],
    ["?.ts", "ab.ts", false],
    ["a.(x)", "a.(x)", true],
  ])("%s against %s is %s", (glob, candidate, expected) => {
    expect(createGlobMatcher(glob)(candidate)).toBe(expected);
  });
});
