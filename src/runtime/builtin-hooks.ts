import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { findBuiltinDir, listItemFiles } from "../directives/index.js";
import { type HookDefinition, layerHooks, parseHookFiles } from "../hooks/index.js";

let cached: readonly HookDefinition[] | undefined;

/**
 * The built-in hooks (`builtin/hooks/`): what a runtime made without an item space runs with.
 * Read once; built-in files are trusted.
 */
export function builtinHooks(): readonly HookDefinition[] {
  if (cached) return cached;
  const root = { tier: "builtin" as const, dir: findBuiltinDir() };
  const files = listItemFiles(root, "hook").map((file) => {
    const bytes = readFileSync(file.path);
    return {
      tier: root.tier,
      path: file.path,
      display: `builtin/hooks/${file.name}.yaml`,
      text: bytes.toString("utf8"),
      source: {
        path: file.path,
        tier: root.tier,
        sha256: createHash("sha256").update(bytes).digest("hex"),
      },
    };
  });
  cached = layerHooks(parseHookFiles(files)).hooks;
  return cached;
}
