import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { createItemSpace, type ItemSpace } from "../../src/directives/index.js";
import { parseHookFile } from "../../src/hooks/index.js";

/** The directories of an item space's three tiers, under one temporary root. */
export interface TempItemSpace {
  root: string;
  /** The project tier's workspace (its items are under `.ai/`). */
  workspace: string;
  /** The user tier's home (its items are under `.ai/`). */
  home: string;
  /** The built-in tier's directory. */
  builtin: string;
  /**
   * An item space over these directories that trusts no key and reads no environment variable;
   * `builtinDir` stands in for `builtin` when given.
   */
  space(builtinDir?: string): ItemSpace;
}

/**
 * Gives each test of the file fresh, empty tier directories under a new temporary root named
 * `prefix…`, removed after the test. The fields of the returned object change per test: read
 * them inside a test, never at module level.
 */
export function useTempItemSpace(prefix: string): TempItemSpace {
  const temp: TempItemSpace = {
    root: "",
    workspace: "",
    home: "",
    builtin: "",
    space: (builtinDir = temp.builtin) =>
      createItemSpace({
        workspace: temp.workspace,
        home: temp.home,
        builtinDir,
        trustedKeys: new Map(),
        env: {},
        itemChecks: { hook: parseHookFile },
      }),
  };
  beforeEach(() => {
    temp.root = mkdtempSync(join(tmpdir(), prefix));
    temp.workspace = join(temp.root, "work");
    temp.home = join(temp.root, "home");
    temp.builtin = join(temp.root, "builtin");
    for (const dir of [temp.workspace, temp.home, temp.builtin])
      mkdirSync(dir, { recursive: true });
  });
  afterEach(() => {
    rmSync(temp.root, { recursive: true, force: true });
  });
  return temp;
}

/** Writes `text` to `path`, making its directories first; returns `path`. */
export function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}
