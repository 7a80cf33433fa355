import { lstat } from "node:fs/promises";
import { z } from "zod";
import { defineTool } from "../actions/index.js";
import type { FsToolOptions } from "./fs-read.js";
import { createGlobMatcher } from "./glob.js";
import { ToolError, toFsToolError } from "./tool-error.js";
import { type EntryType, SKIPPED_DIRECTORIES, walkWorkspace } from "./walk.js";

/** One entry of `fs.list`'s result. */
export interface FsListEntry {
  /** Relative to the workspace root, ready to pass to `fs.read`. */
  path: string;
  type: EntryType;
  /** Bytes, for files only. */
  size?: number;
}

/** `fs.list`'s result. */
export interface FsListResult {
  path: string;
  entries: FsListEntry[];
  /** True when the entry cap or the walk cap stopped the listing early. */
  truncated: boolean;
}

/** How deep a recursive listing goes unless asked otherwise. */
const DEFAULT_DEPTH = 8;
/** The deepest a listing may be asked to go. */
const MAX_DEPTH = 64;

const parameters = z.strictObject({
  path: z
    .string()
    .default(".")
    .describe("Folder relative to the workspace root (default `.`, the root)."),
  recursive: z
    .boolean()
    .default(false)
    .describe(
      "List sub-folders too (default false). `.git`, `node_modules`, `.spool` are not entered.",
    ),
  depth: z
    .number()
    .int()
    .min(1)
    .max(MAX_DEPTH)
    .optional()
    .describe(`With recursive: how many levels to go down (default ${DEFAULT_DEPTH}).`),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Only entries matching this glob, e.g. `*.ts` (by name) or `src/**/*.test.ts` (by path under the folder).",
    ),
});

/**
 * `fs.list`: the entries of a workspace folder (optionally recursive, depth- and count-capped,
 * glob-filtered), sorted by name, with type and file size. Never follows a symbolic link.
 * Idempotent, no side effects.
 */
export function fsListTool({ workspace, limits }: FsToolOptions) {
  return defineTool({
    name: "fs.list",
    description:
      "Lists a folder in the workspace: each entry's path, type (file, directory, symlink, other) and file size. " +
      `Set recursive to walk sub-folders and glob to filter; at most ${limits.listEntries} entries.`,
    parameters,
    idempotent: true,
    sideEffects: false,
    async execute(input, context): Promise<FsListResult> {
      const base = await workspace.resolve(input.path);
      if (!base.exists) throw toFsToolError({ code: "ENOENT" }, base.relative);
      const matches = input.glob ? createGlobMatcher(input.glob) : () => true;
      const state = { visited: 0, exhausted: false };
      const entries: FsListEntry[] = [];
      let truncated = false;
      try {
        const baseStat = await lstat(base.real);
        if (!baseStat.isDirectory()) {
          throw new ToolError("tool.not-directory", `\`${base.relative}\` is not a folder`, {
            hint: "Use fs.read to read a file; give fs.list a folder",
          });
        }
        const walk = walkWorkspace(
          {
            baseReal: base.real,
            baseRelative: base.relative,
            maxDepth: input.recursive ? (input.depth ?? DEFAULT_DEPTH) : 1,
            maxEntries: limits.walkEntries,
            descend: (entry) => !SKIPPED_DIRECTORIES.has(entry.name),
            signal: context.signal,
          },
          state,
        );
        for await (const entry of walk) {
          if (!matches(entry.fromBase)) continue;
          if (entries.length >= limits.listEntries) {
            truncated = true;
            break;
          }
          const listed: FsListEntry = { path: entry.relative, type: entry.type };
          if (entry.type === "file") {
            try {
              listed.size = (await lstat(entry.absolute)).size;
            } catch {
              // Gone since the folder was read: listed without a size.
            }
          }
          entries.push(listed);
        }
      } catch (error) {
        throw toFsToolError(error, base.relative);
      }
      return { path: base.relative, entries, truncated: truncated || state.exhausted };
    },
  });
}
