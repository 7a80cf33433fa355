import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { ItemKind, ItemTier } from "./item-source.js";

/** One root of the three tiers: its tier and folder. */
export interface SpaceRoot {
  tier: ItemTier;
  dir: string;
}

/** One item file found in a root. */
export interface ItemFile {
  kind: ItemKind;
  /** The name items are asked for by: path under the kind's folder, without extension, `/`-separated. */
  name: string;
  tier: ItemTier;
  path: string;
}

/**
 * The folder of each kind inside a space, and its file extension (`config` and `coordination`
 * are one file each, at the root: see `ROOT_FILES`).
 */
export const KIND_LAYOUT: Readonly<Record<ItemKind, { folder: string; extension: string }>> = {
  directive: { folder: "directives", extension: ".md" },
  agent: { folder: "agents", extension: ".yaml" },
  workflow: { folder: "workflows", extension: ".yaml" },
  hook: { folder: "hooks", extension: ".yaml" },
  config: { folder: "", extension: ".yaml" },
  coordination: { folder: "", extension: ".yaml" },
};

/** The file name of a space's config. */
export const CONFIG_FILE = "config.yaml";

/** The file name of a space's coordination settings (the handoff pipeline). */
export const COORDINATION_FILE = "coordination.yaml";

/** The kinds that are one file at the root of a space, merged across tiers, never shadowed. */
export type RootFileKind = "config" | "coordination";

/** The file of each root-file kind; its item name is the kind itself. */
export const ROOT_FILES: Readonly<Record<RootFileKind, string>> = {
  config: CONFIG_FILE,
  coordination: COORDINATION_FILE,
};

/** True for `config` and `coordination`: one root file per tier, the tiers merged. */
export function isRootFileKind(kind: ItemKind): kind is RootFileKind {
  return kind === "config" || kind === "coordination";
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;

/** True for a usable item name: segments of letters, digits, `_`, `.`, `-` joined by `/`. */
export function isItemName(name: string): boolean {
  return NAME.test(name) && !name.split("/").some((segment) => segment === "." || segment === "..");
}

/**
 * Where item `name` of `kind` would be in `root` (config and coordination: their root file,
 * whatever the name).
 */
export function itemPath(root: SpaceRoot, kind: ItemKind, name: string): string {
  if (isRootFileKind(kind)) return join(root.dir, ROOT_FILES[kind]);
  const layout = KIND_LAYOUT[kind];
  return join(root.dir, layout.folder, ...name.split("/")) + layout.extension;
}

/**
 * Every item file of `kind` in `root`, sorted by name. Sub-folders are walked (`streams/x.md` is
 * `streams/x`); files of other extensions, `.sig` sidecars, hidden files and names that are not
 * item names are skipped. A missing folder gives none; never throws for unreadable folders.
 */
export function listItemFiles(root: SpaceRoot, kind: ItemKind): ItemFile[] {
  if (isRootFileKind(kind)) {
    const path = join(root.dir, ROOT_FILES[kind]);
    return isFile(path) ? [{ kind, name: kind, tier: root.tier, path }] : [];
  }
  const layout = KIND_LAYOUT[kind];
  const base = join(root.dir, layout.folder);
  const files: ItemFile[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.startsWith(".")) continue;
      const path = join(dir, entry);
      if (depth < 8 && isDirectory(path)) walk(path, depth + 1);
      else if (entry.endsWith(layout.extension) && isFile(path)) {
        const name = relative(base, path).slice(0, -layout.extension.length).split(sep).join("/");
        if (isItemName(name)) files.push({ kind, name, tier: root.tier, path });
      }
    }
  };
  if (existsSync(base)) walk(base, 0);
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** True when `path` is a regular file (following links); never throws. */
export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
