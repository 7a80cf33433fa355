import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, open, realpath, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineTool } from "../actions/index.js";
import type { FsToolOptions } from "./fs-read.js";
import { ToolError, toFsToolError } from "./tool-error.js";
import { O_NOFOLLOW, type Workspace, type WorkspacePath } from "./workspace.js";

/** How `fs.write` treats an existing file. */
export type WriteMode = "create" | "overwrite" | "append";

/** `fs.write`'s result. */
export interface FsWriteResult {
  path: string;
  mode: WriteMode;
  /** Bytes written by this call. */
  bytes: number;
  /** True when the file did not exist before. */
  created: boolean;
}

const parameters = z.strictObject({
  path: z
    .string()
    .describe("File path relative to the workspace root; missing folders are created."),
  content: z.string().describe("The text to write, as UTF-8."),
  mode: z
    .enum(["create", "overwrite", "append"])
    .default("create")
    .describe(
      "`create` (default) fails if the file exists; `overwrite` replaces it atomically; `append` adds to its end (creating it if missing).",
    ),
});

/**
 * Creates the missing folders above `target` and checks again that its real parent is inside
 * the workspace (a link could have been planted while the folders were made).
 */
async function prepareParent(workspace: Workspace, target: WorkspacePath): Promise<void> {
  const parent = path.dirname(target.real);
  const parentRelative = path.posix.dirname(target.relative);
  try {
    await mkdir(parent, { recursive: true });
    const rootReal = await workspace.realRoot();
    const real = await realpath(parent);
    if (real !== rootReal && !real.startsWith(rootReal + path.sep)) {
      throw new ToolError(
        "tool.path-outside-workspace",
        `\`${target.relative}\` is outside the workspace: its folder moved outside while being created`,
        { hint: "Use a path that stays inside the workspace" },
      );
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw toFsToolError(
      code === "EEXIST" ? { code: "ENOTDIR" } : error,
      code === "EEXIST" ? parentRelative : target.relative,
    );
  }
}

async function writeExclusive(file: string, content: string): Promise<void> {
  const handle = await open(file, "wx");
  try {
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
}

async function appendTo(file: string, content: string): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | O_NOFOLLOW;
  const handle = await open(file, flags, 0o666);
  try {
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
}

/** Writes a temporary file beside `file`, flushes it, and renames it over `file`. */
async function replaceAtomically(file: string, content: string): Promise<void> {
  let mode = 0o666;
  try {
    const existing = await stat(file);
    if (existing.isDirectory())
      throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    mode = existing.mode & 0o7777;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") throw error;
  }
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomUUID().slice(0, 8)}.spool-tmp`,
  );
  try {
    const handle = await open(temporary, "wx", mode);
    try {
      await handle.writeFile(content, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * `fs.write`: writes UTF-8 text to a workspace file in `create`, `overwrite` or `append` mode,
 * creating missing folders. `overwrite` is atomic (a temporary file renamed over the target, so
 * readers see the old or the new content, never a mix). Side effects; not idempotent, because
 * `append` is not and `create` fails when repeated.
 */
export function fsWriteTool({ workspace, limits }: FsToolOptions) {
  return defineTool({
    name: "fs.write",
    description:
      "Writes text to a file in the workspace, creating missing folders. Mode `create` (default) refuses an existing file, " +
      "`overwrite` replaces it atomically, `append` adds to its end.",
    parameters,
    idempotent: false,
    sideEffects: true,
    async execute(input): Promise<FsWriteResult> {
      const bytes = Buffer.byteLength(input.content, "utf8");
      if (bytes > limits.writeBytes) {
        throw new ToolError(
          "tool.too-large",
          `the content is ${bytes} bytes; fs.write takes at most ${limits.writeBytes}`,
          { hint: "Write it in parts: the first with mode `create`, the rest with mode `append`" },
        );
      }
      const target = await workspace.resolve(input.path, "write");
      if (target.relative === ".") throw toFsToolError({ code: "EISDIR" }, ".");
      await prepareParent(workspace, target);
      try {
        if (input.mode === "create") await writeExclusive(target.real, input.content);
        else if (input.mode === "append") await appendTo(target.real, input.content);
        else await replaceAtomically(target.real, input.content);
      } catch (error) {
        throw toFsToolError(error, target.relative);
      }
      return { path: target.relative, mode: input.mode, bytes, created: !target.exists };
    },
  });
}
