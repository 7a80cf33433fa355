import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AnyTool, ToolContext } from "../src/actions/index.js";
import { builtinTools } from "../src/tools/index.js";

function context(): ToolContext {
  return { actionId: "a", attempt: 1, signal: new AbortController().signal, progress: () => {} };
}

let workspace: string;
let tools: AnyTool[];

function write(parameters: unknown): Promise<unknown> {
  const tool = tools.find((candidate) => candidate.name === "fs.write")!;
  return Promise.resolve(tool.execute(tool.parameters.parse(parameters), context()));
}

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "spool-write-"));
  tools = builtinTools({ workspace, limits: { writeBytes: 32 } });
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe("fs.write", () => {
  it("creates a file and its missing folders", async () => {
    await expect(write({ path: "a/b/c.txt", content: "hé" })).resolves.toEqual({
      path: "a/b/c.txt",
      mode: "create",
      bytes: 3,
      created: true,
    });
    expect(await readFile(path.join(workspace, "a/b/c.txt"), "utf8")).toBe("hé");
  });

  it("create refuses an existing file and says which mode to use", async () => {
    await writeFile(path.join(workspace, "x.txt"), "old");
    await expect(write({ path: "x.txt", content: "new" })).rejects.toMatchObject({
      code: "tool.already-exists",
      message: expect.stringContaining('mode "overwrite"'),
    });
    expect(await readFile(path.join(workspace, "x.txt"), "utf8")).toBe("old");
  });

  it("overwrite replaces atomically, keeps the file mode and leaves no temporary file", async () => {
    await writeFile(path.join(workspace, "run.sh"), "old content");
    await chmod(path.join(workspace, "run.sh"), 0o755);
    await expect(
      write({ path: "run.sh", content: "new", mode: "overwrite" }),
    ).resolves.toMatchObject({ created: false, bytes: 3 });
    expect(await readFile(path.join(workspace, "run.sh"), "utf8")).toBe("new");
    expect((await stat(path.join(workspace, "run.sh"))).mode & 0o777).toBe(0o755);
    expect(await readdir(workspace)).toEqual(["run.sh"]);
  });

  it("overwrite through a link inside the workspace replaces the target, keeping the link", async () => {
    await mkdir(path.join(workspace, "real"));
    await writeFile(path.join(workspace, "real", "f.txt"), "old");
    await symlink(path.join(workspace, "real", "f.txt"), path.join(workspace, "alias.txt"));
    await write({ path: "alias.txt", content: "new", mode: "overwrite" });
    expect(await readFile(path.join(workspace, "real", "f.txt"), "utf8")).toBe("new");
  });

  it("append adds to the end, creating the file first if needed", async () => {
    await write({ path: "log.txt", content: "one\n", mode: "append" });
    await write({ path: "log.txt", content: "two\n", mode: "append" });
    expect(await readFile(path.join(workspace, "log.txt"), "utf8")).toBe("one\ntwo\n");
  });

  it("refuses content over the cap, suggesting writing in parts", async () => {
    await expect(write({ path: "big.txt", content: "z".repeat(33) })).rejects.toMatchObject({
      code: "tool.too-large",
      message: expect.stringContaining("append"),
    });
  });

  it("refuses to write over a folder or under a file", async () => {
    await mkdir(path.join(workspace, "dir"));
    await writeFile(path.join(workspace, "file"), "x");
    await expect(write({ path: "dir", content: "x", mode: "overwrite" })).rejects.toMatchObject({
      code: "tool.is-directory",
    });
    await expect(write({ path: "file/inner.txt", content: "x" })).rejects.toMatchObject({
      code: "tool.not-directory",
    });
  });

  it("declares side effects and is not idempotent", () => {
    const tool = tools.find((candidate) => candidate.name === "fs.write")!;
    expect({ sideEffects: tool.sideEffects, idempotent: tool.idempotent }).toEqual({
      sideEffects: true,
      idempotent: false,
    });
  });
});
