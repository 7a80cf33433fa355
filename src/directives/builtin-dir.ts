import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The `builtin/` folder shipped with Spool: found by walking up from this module to the folder
 * that holds `package.json`, so it resolves the same from `src/` (tsx, tests) and from `dist/`
 * (the built package, whose `files` include `builtin`). Returns the path even when the folder is
 * missing; an item space treats a missing folder as empty.
 */
export function findBuiltinDir(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return join(dir, "builtin");
    const parent = dirname(dir);
    if (parent === dir) return join(dirname(from), "builtin");
    dir = parent;
  }
}
