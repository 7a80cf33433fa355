import type { ItemSource, ItemSpace, ItemTier } from "../directives/index.js";
import { itemConfigError } from "../directives/index.js";
import {
  compareHookOrder,
  type HookDefinition,
  type HookEntry,
  parseHookFile,
} from "./hook-definition.js";

/** One hook file as an item space reads it (`ItemSpace.hookFiles`): trust already checked. */
export interface HookFile {
  tier: ItemTier;
  path: string;
  /** The path as messages show it. */
  display: string;
  text: string;
  source: ItemSource;
}

/** Options of `loadHooks`. */
export interface LoadHooksOptions {
  /** The item space whose three tiers hold the hook files (`hooks/**\/*.yaml`). */
  space: Pick<ItemSpace, "hookFiles">;
}

/** The hooks in force after layering the tiers. */
export interface HookSet {
  /** The enabled hooks, in evaluation order: layer 1 then layer 2, each by id. */
  hooks: HookDefinition[];
  /** Ids whose highest entry is `enabled: false`, sorted. */
  disabled: string[];
  /** Entries replaced by a higher tier's entry of the same id, highest tier first. */
  overridden: HookEntry[];
}

const TIER_RANK: Readonly<Record<ItemTier, number>> = { project: 0, user: 1, builtin: 2 };

/**
 * Reads every hook file of the space's three tiers (project `.ai/hooks/`, user `~/.ai/hooks/`,
 * built-in `hooks/`, sub-folders included) and layers them (`layerHooks`). Reads the files afresh
 * on every call. Throws the space's `ItemTrustError` for a refused file, and `ConfigError`
 * (`config.hook`) for a malformed one or for an id used twice in one tier.
 */
export function loadHooks(options: LoadHooksOptions): HookSet {
  return layerHooks(parseHookFiles(options.space.hookFiles()));
}

/**
 * Parses hook files (`parseHookFile`, each with its tier's default layer) and checks that no id
 * is used twice within one tier. Throws `ConfigError` (`config.hook`) naming both places.
 */
export function parseHookFiles(files: readonly HookFile[]): HookEntry[] {
  const entries: HookEntry[] = [];
  const byTierId = new Map<string, HookEntry>();
  for (const file of files) {
    const parsed = parseHookFile(file.text, {
      path: file.path,
      display: file.display,
      tier: file.tier,
      sha256: file.source.sha256,
      ...(file.source.signed ? { signed: file.source.signed } : {}),
    });
    for (const entry of parsed) {
      const key = `${file.tier}\u0000${entry.id}`;
      const earlier = byTierId.get(key);
      if (earlier) {
        throw itemConfigError(
          "config.hook",
          file.display,
          [
            {
              ...(entry.source.line ? { line: entry.source.line } : {}),
              field: "id",
              message: `"${entry.id}" is also the id of a hook in ${where(earlier)}: ids are unique within a tier`,
            },
          ],
          "Rename one of the two hooks, or delete one (docs/hooks.md)",
        );
      }
      byTierId.set(key, entry);
      entries.push(entry);
    }
  }
  return entries;
}

/**
 * Layers hook entries across tiers: for each id, the entry of the highest tier wins (project over
 * user over built-in); when that entry is `enabled: false` the id has no hook. Pure; the input's
 * order does not matter.
 */
export function layerHooks(entries: readonly HookEntry[]): HookSet {
  const ranked = [...entries].sort(
    (a, b) => TIER_RANK[a.source.tier] - TIER_RANK[b.source.tier] || compareHookOrder(a, b),
  );
  const winners = new Map<string, HookEntry>();
  const overridden: HookEntry[] = [];
  for (const entry of ranked) {
    if (winners.has(entry.id)) overridden.push(entry);
    else winners.set(entry.id, entry);
  }
  const hooks: HookDefinition[] = [];
  const disabled: string[] = [];
  for (const entry of winners.values()) {
    if (entry.enabled) hooks.push(entry);
    else disabled.push(entry.id);
  }
  return {
    hooks: hooks.sort(compareHookOrder),
    disabled: disabled.sort(),
    overridden,
  };
}

function where(entry: HookEntry): string {
  return `${entry.source.display}${entry.source.line ? `:${entry.source.line}` : ""}`;
}
