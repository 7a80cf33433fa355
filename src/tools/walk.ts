import { readdir } from "node:fs/promises";
import path from "node:path";
import { abortedError, toFsToolError } from "./tool-error.js";

/** Folders `fs.search` never enters and `fs.list` lists but does not descend into. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set([".git", "node_modules", ".spool"]);

/** What a directory entry is; a symbolic link is reported as such and never followed. */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** One entry met by `walkWorkspace`. */
export interface WalkEntry {
  /** The entry's own name. */
  name: string;
  /** Relative to the workspace root, `/`-separated. */
  relative: string;
  /** Relative to the folder walked, `/`-separated. */
  fromBase: string;
  /** Its real absolute path (its folder has no links: the walk never follows one). */
  absolute: string;
  type: EntryType;
  /** 1 for the walked folder's own entries. */
  depth: number;
}

/** Where to walk and how far. */
export interface WalkOptions {
  /** The folder's real path (from `Workspace.resolve`). */
  baseReal: string;
  /** The folder relative to the workspace root, `.` for the root. */
  baseRelative: string;
  /** Deepest level visited: 1 lists only the folder's own entries. */
  maxDepth: number;
  /** Most entries visited before the walk stops with `state.exhausted`. */
  maxEntries: number;
  /** Whether to enter a directory entry (checked after it is yielded). */
  descend(entry: WalkEntry): boolean;
  signal: AbortSignal;
}

/** Counters a walk updates as it goes. */
export interface WalkState {
  visited: number;
  /** True when `maxEntries` stopped the walk early. */
  exhausted: boolean;
}

function typeOf(dirent: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }) {
  if (dirent.isSymbolicLink()) return "symlink" as const;
  if (dirent.isDirectory()) return "directory" as const;
  if (dirent.isFile()) return "file" as const;
  return "other" as const;
}

/**
 * Every entry under `options.baseReal`, depth first, names in code-point order. Never follows a
 * symbolic link. An unreadable sub-folder is skipped; an unreadable base folder throws a
 * `ToolError`, as does an aborted signal (`tool.aborted`).
 */
export async function* walkWorkspace(
  options: WalkOptions,
  state: WalkState,
): AsyncGenerator<WalkEntry> {
  async function* walkFolder(
    folder: string,
    fromBase: string,
    depth: number,
  ): AsyncGenerator<WalkEntry> {
    if (options.signal.aborted) throw abortedError("the walk of the workspace");
    let dirents: Awaited<ReturnType<typeof readdirTyped>>;
    try {
      dirents = await readdirTyped(folder);
    } catch (error) {
      if (depth === 1) throw toFsToolError(error, options.baseRelative);
      return;
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const dirent of dirents) {
      if (state.visited >= options.maxEntries) {
        state.exhausted = true;
        return;
      }
      state.visited += 1;
      const childFromBase = fromBase === "" ? dirent.name : `${fromBase}/${dirent.name}`;
      const entry: WalkEntry = {
        name: dirent.name,
        relative:
          options.baseRelative === "." ? childFromBase : `${options.baseRelative}/${childFromBase}`,
        fromBase: childFromBase,
        absolute: path.join(folder, dirent.name),
        type: typeOf(dirent),
        depth,
      };
      yield entry;
      if (entry.type === "directory" && depth < options.maxDepth && options.descend(entry)) {
        yield* walkFolder(entry.absolute, childFromBase, depth + 1);
      }
    }
  }
  yield* walkFolder(options.baseReal, "", 1);
}

function readdirTyped(folder: string) {
  return readdir(folder, { withFileTypes: true });
}
