import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AnyTool, ToolContext } from "../src/actions/index.js";
import { SpoolError } from "../src/spec/index.js";
import { builtinTools } from "../src/tools/index.js";

function context(): ToolContext {
  return { actionId: "a", attempt: 1, signal: new AbortController().signal, progress: () => {} };
}

let base: string;
let workspace: string;
let outside: string;
let tools: AnyTool[];

async function call(name: string, parameters: unknown): Promise<unknown> {
  const tool = tools.find((candidate) => candidate.name === name)!;
  return tool.execute(tool.parameters.parse(parameters), context());
}

async function refusal(name: string, parameters: unknown): Promise<SpoolError> {
  try {
    await call(name, parameters);
  } catch (error) {
    expect(error).toBeInstanceOf(SpoolError);
    return error as SpoolError;
  }
  throw new Error(`${name} accepted ${JSON.stringify(parameters)}`);
}

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), "spool-tools-"));
  workspace = path.join(base, "workspace");
  outside = path.join(base, "outside");
  await mkdir(path.join(workspace, "inner"), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, "secret.txt"), "top secret\n");
  await writeFile(path.join(workspace, "inner", "ok.txt"), "fine\n");
  tools = builtinTools({ workspace });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("workspace confinement", () => {
  it.each([
    ["fs.read", { path: "../outside/secret.txt" }],
    ["fs.list", { path: ".." }],
    ["fs.search", { pattern: "secret", path: "inner/../../outside" }],
    ["fs.write", { path: "../outside/new.txt", content: "x" }],
  ])("%s refuses a path that climbs out with ..", async (name, parameters) => {
    const error = await refusal(name, parameters);
    expect(error.code).toBe("tool.path-outside-workspace");
    expect(error.message).toContain("`..` climbs above the workspace root");
    expect(error.retryable).toBe(false);
  });

  it.each([
    ["fs.read", { path: "/etc/passwd" }],
    ["fs.list", { path: "/" }],
    ["fs.write", { path: "/tmp/spool-should-not-exist.txt", content: "x" }],
  ])("%s refuses an absolute path", async (name, parameters) => {
    const error = await refusal(name, parameters);
    expect(error.code).toBe("tool.path-outside-workspace");
    expect(error.message).toContain("absolute paths are not allowed");
    expect(error.message).toContain("relative to the workspace root");
  });

  it("refuses a symbolic link to outside as the last component, naming the link", async () => {
    await symlink(path.join(outside, "secret.txt"), path.join(workspace, "leak.txt"));
    const error = await refusal("fs.read", { path: "leak.txt" });
    expect(error.code).toBe("tool.path-outside-workspace");
    expect(error.message).toContain(
      "`leak.txt` is a symbolic link to a place outside the workspace",
    );
    expect(error.message).not.toContain("top secret");
  });

  it("refuses a symbolic link to outside in the middle of the path", async () => {
    await symlink(outside, path.join(workspace, "inner", "door"));
    for (const [name, parameters] of [
      ["fs.read", { path: "inner/door/secret.txt" }],
      ["fs.list", { path: "inner/door" }],
      ["fs.search", { pattern: "secret", path: "inner/door" }],
    ] as const) {
      const error = await refusal(name, parameters);
      expect(error.code).toBe("tool.path-outside-workspace");
      expect(error.message).toContain("`inner/door` is a symbolic link");
    }
  });

  it("refuses to write through a symbolic-linked parent, even into a folder yet to be made", async () => {
    await symlink(outside, path.join(workspace, "door"));
    for (const target of ["door/new.txt", "door/deeper/new.txt"]) {
      const error = await refusal("fs.write", { path: target, content: "x", mode: "overwrite" });
      expect(error.code).toBe("tool.path-outside-workspace");
    }
    await expect(readFile(path.join(outside, "new.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readFile(path.join(outside, "deeper", "new.txt"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("refuses to write through a dangling link that points outside", async () => {
    await symlink(path.join(outside, "planted.txt"), path.join(workspace, "trap.txt"));
    for (const mode of ["create", "overwrite", "append"]) {
      const error = await refusal("fs.write", { path: "trap.txt", content: "x", mode });
      expect(error.code).toBe("tool.path-outside-workspace");
    }
    await expect(readFile(path.join(outside, "planted.txt"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("accepts links that stay inside the workspace", async () => {
    await symlink(path.join(workspace, "inner"), path.join(workspace, "alias"));
    await expect(call("fs.read", { path: "alias/ok.txt" })).resolves.toMatchObject({
      path: "alias/ok.txt",
      content: "fine\n",
    });
  });

  it("accepts `..` that stays inside, and `.` for the root", async () => {
    await expect(call("fs.read", { path: "inner/../inner/ok.txt" })).resolves.toMatchObject({
      path: "inner/ok.txt",
    });
    await expect(call("fs.list", { path: "." })).resolves.toMatchObject({ path: "." });
  });

  it("wraps a missing file in tool.not-found with the relative path, never a raw Node error", async () => {
    const error = await refusal("fs.read", { path: "inner/missing.txt" });
    expect(error.code).toBe("tool.not-found");
    expect(error.message).toContain("`inner/missing.txt` does not exist");
    expect(error.message).not.toContain(workspace);
  });

  it("keeps out of .spool entirely and does not write into .git, links included", async () => {
    await mkdir(path.join(workspace, ".spool", "keys"), { recursive: true });
    await writeFile(path.join(workspace, ".spool", "keys", "signing.key"), "private");
    await mkdir(path.join(workspace, ".git", "hooks"), { recursive: true });
    await writeFile(path.join(workspace, ".git", "HEAD"), "ref: refs/heads/main\n");
    await symlink(path.join(workspace, ".spool"), path.join(workspace, "state"));
    for (const [name, parameters] of [
      ["fs.read", { path: ".spool/keys/signing.key" }],
      ["fs.read", { path: "state/keys/signing.key" }],
      ["fs.list", { path: ".spool" }],
      ["fs.write", { path: ".spool/keys/signing.key", content: "x", mode: "overwrite" }],
      ["fs.write", { path: ".git/hooks/pre-commit", content: "#!/bin/sh" }],
    ] as const) {
      const error = await refusal(name, parameters);
      expect(error.code).toBe("tool.path-reserved");
    }
    await expect(call("fs.read", { path: ".git/HEAD" })).resolves.toMatchObject({
      content: "ref: refs/heads/main\n",
    });
  });

  it("reports a missing workspace as tool.workspace-unavailable", async () => {
    tools = builtinTools({ workspace: path.join(base, "nowhere") });
    const error = await refusal("fs.list", {});
    expect(error.code).toBe("tool.workspace-unavailable");
  });
});
