import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { matchesGlob } from "../directives/index.js";

/** Which files of a dataset directory are read: a glob over the relative path, and suffixes. */
export interface DatasetFilter {
  /** A glob (`*` within a segment, `**` across them) over the path relative to the root. */
  glob?: string;
  /** File name endings, e.g. `[".jsonl", ".txt"]`; absent or empty: any. */
  extensions?: readonly string[];
}

/**
 * Orders relative paths segment by segment (`a/z` before `a.txt`, as a walk that sorts each
 * directory's names visits them): the order a dataset is read in and its cursor compares by.
 * Names compare by UTF-16 code units, the same on every machine (no locale).
 */
export function compareDatasetPaths(left: string, right: string): number {
  const a = left === "" ? [] : left.split("/");
  const b = right === "" ? [] : right.split("/");
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    if (a[index] !== b[index]) return a[index]! < b[index]! ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * The files of a dataset directory, recursively, in `compareDatasetPaths` order, as paths
 * relative to `root` joined with `/`, starting at `from` (included) when given. Reads one
 * directory at a time, and skips without reading every directory that holds only paths before
 * `from`, so memory follows the widest directory, not the whole tree. Follows symbolic links to
 * files, not to directories (no loops). Errors (a directory it may not read) are thrown.
 */
export async function* datasetFiles(
  root: string,
  filter: DatasetFilter,
  from?: string,
): AsyncGenerator<string> {
  yield* walk(root, [], filter, from === undefined || from === "" ? undefined : from.split("/"));
}

async function* walk(
  root: string,
  segments: readonly string[],
  filter: DatasetFilter,
  from: readonly string[] | undefined,
): AsyncGenerator<string> {
  const entries: Dirent[] = await readdir(join(root, ...segments), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = [...segments, entry.name];
    const position = from === undefined ? 1 : comparePrefix(path, from);
    if (position < 0) continue;
    const kind = await kindOf(root, path, entry);
    if (kind === "directory") {
      yield* walk(root, path, filter, position === 0 ? from : undefined);
    } else if (kind === "file" && (position > 0 || path.length === from?.length)) {
      const relative = path.join("/");
      if (accepts(filter, relative)) yield relative;
    }
  }
}

/** How `path` compares with the same-length start of `from`: -1 before, 0 equal, 1 after. */
function comparePrefix(path: readonly string[], from: readonly string[]): number {
  for (let index = 0; index < path.length; index++) {
    const other = from[index];
    if (other === undefined) return 1;
    if (path[index] !== other) return path[index]! < other ? -1 : 1;
  }
  return 0;
}

async function kindOf(
  root: string,
  path: readonly string[],
  entry: Dirent,
): Promise<"file" | "directory" | "other"> {
  if (entry.isDirectory()) return "directory";
  if (entry.isFile()) return "file";
  if (!entry.isSymbolicLink()) return "other";
  const target = await stat(join(root, ...path)).catch(() => undefined);
  return target?.isFile() ? "file" : "other";
}

function accepts(filter: DatasetFilter, relative: string): boolean {
  if (filter.glob !== undefined && !matchesGlob(filter.glob, relative)) return false;
  const extensions = filter.extensions ?? [];
  return extensions.length === 0 || extensions.some((suffix) => relative.endsWith(suffix));
}
