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

/** The folder of each kind inside a space, and its file extension (`config` is one file). */
export const KIND_LAYOUT: Readonly<Record<ItemKind, { folder: string; extension: string }>> = {
  directive: { folder: "directives", extension: ".md" },
  agent: { folder: "agents", extension: ".yaml" },
  workflow: { folder: "workflows", extension: ".yaml" },
  hook: { folder: "hooks", extension: ".yaml" },
  config: { folder: "", extension: ".yaml" },
};

/** The file name of a space's config. */
export const CONFIG_FILE = "config.yaml";

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;

/** True for a usable item name: segments of letters, digits, `_`, `.`, `-` joined by `/`. */
export function isItemName(name: string): boolean {
  return NAME.test(name) && !name.split("/").some((segment) => segment === "." || segment === "..");
}

/** Where item `name` of `kind` would be in `root` (config: `config.yaml`, whatever the name). */
export function itemPath(root: SpaceRoot, kind: ItemKind, name: string): string {
  if (kind === "config") return join(root.dir, CONFIG_FILE);
  const layout = KIND_LAYOUT[kind];
  return join(root.dir, layout.folder, ...name.split("/")) + layout.extension;
}

/**
 * Every item file of `kind` in `root`, sorted by name. Sub-folders are walked (`streams/x.md` is
 * `streams/x`); files of other extensions, `.sig` sidecars, hidden files and names that are not
 * item names are skipped. A missing folder gives none; never throws for unreadable folders.
 */
export function listItemFiles(root: SpaceRoot, kind: ItemKind): ItemFile[] {
  if (kind === "config") {
    const path = join(root.dir, CONFIG_FILE);
    return isFile(path) ? [{ kind, name: "config", tier: root.tier, path }] : [];
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
