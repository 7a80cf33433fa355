import type { KeyObject } from "node:crypto";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { ConfigError, describeError, SpoolError } from "../spec/index.js";
import { loadTrustedKeys, resolveKeysDir } from "../transcript/index.js";
import { type AgentManifest, parseAgentManifest } from "./agent-manifest.js";
import { findBuiltinDir } from "./builtin-dir.js";
import {
  type CoordinationConfig,
  type CoordinationLayer,
  mergeCoordinationLayers,
  parseCoordinationLayer,
} from "./coordination-config.js";
import type { Directive } from "./directive.js";
import { parseDirective } from "./directive-file.js";
import {
  isFile,
  isItemName,
  isRootFileKind,
  itemPath,
  KIND_LAYOUT,
  listItemFiles,
  type SpaceRoot,
} from "./item-files.js";
import { displayPath } from "./item-issues.js";
import { ItemTrustError, readSignedItem, unsignedItemError } from "./item-signing.js";
import { ITEM_KINDS, type ItemKind, type ItemSource, type ItemTier } from "./item-source.js";
import {
  type ConfigLayer,
  mergeConfigLayers,
  parseConfigLayer,
  type SpaceConfig,
} from "./space-config.js";

/** Options of `createItemSpace`. */
export interface ItemSpaceOptions {
  /** The workspace; the project tier is `<workspace>/.ai/`. */
  workspace: string;
  /** The home directory; the user tier is `<home>/.ai/`. Default `os.homedir()`. */
  home?: string;
  /** The built-in tier. Default `findBuiltinDir()` (Spool's own `builtin/`). */
  builtinDir?: string;
  /**
   * Public keys trusted for item signatures, by key id. Default: `loadTrustedKeys(keysDir)`,
   * read on every load so a new key counts at once.
   */
  trustedKeys?: ReadonlyMap<string, KeyObject>;
  /** The keys directory. Default `resolveKeysDir({ cwd: workspace, env })` (`.spool/keys/`). */
  keysDir?: string;
  /** Read for `SPOOL_KEYS`/`SPOOL_DB` and `${VAR}` in manifests' feeds. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /**
   * Checks for item kinds whose parsers live in modules above this one (`hook`: the hooks module's
   * `parseHookFile`), run by `list` to report a file's problem. A kind without a check is listed
   * with its trust checked but its content unparsed. The CLI passes `{ hook: parseHookFile }`.
   */
  itemChecks?: Partial<Record<ItemKind, ItemCheck>>;
}

/** Parses one item file's text and throws (with its line) when it is not a valid item. */
export type ItemCheck = (
  text: string,
  where: { path: string; display: string; tier: ItemTier },
) => unknown;

/** One item file as `list` reports it. */
export interface ItemListing {
  kind: ItemKind;
  name: string;
  tier: ItemTier;
  path: string;
  /** The path as messages show it (`.ai/directives/x.md`, `~/.ai/…`). */
  display: string;
  /** False when a higher tier has the same item (config and coordination merge: always true). */
  active: boolean;
  /** The higher tier that hides this one, when `active` is false. */
  shadowedBy?: ItemTier;
  /** Lower tiers with an item of the same kind and name: hidden (config, coordination: merged). */
  shadows: ItemTier[];
  /** `builtin`: trusted without a signature; `invalid`: refused (see `problem`). */
  signature: "verified" | "unsigned" | "invalid" | "builtin";
  /** The key that signed it, when verified. */
  keyId?: string;
  /** Why loading it fails (bad signature, unsigned under the policy, malformed), if it does. */
  problem?: string;
}

/**
 * The three tiers of items, highest precedence first: project `.ai/`, user `~/.ai/`, built-in.
 *
 * Contract: every load reads the files afresh (items may change while an agent runs) and
 * verifies signatures before parsing, on exactly the bytes parsed. A signed item whose signature
 * does not prove its bytes is refused with `ItemTrustError`, whatever the policy; with
 * `policy.require_signatures`, unsigned project and user items (configs included) are refused
 * too. Built-in items are trusted. A malformed item is a `ConfigError` naming file, line, field.
 */
export interface ItemSpace {
  /** The tiers that exist as folders or not, highest precedence first. */
  readonly roots: readonly SpaceRoot[];
  /** The directive `name` from the highest tier that has it. */
  directive(name: string): Directive;
  /** The agent manifest `name` from the highest tier that has it. */
  manifest(name: string): AgentManifest;
  /** Every tier's `config.yaml`, merged (see `mergeConfigLayers`). */
  config(): SpaceConfig;
  /**
   * Every tier's `coordination.yaml`, merged (see `mergeCoordinationLayers`); unsigned project
   * and user files are refused under `config().policy.requireSignatures`.
   */
  coordination(): CoordinationConfig;
  /** Every item file of every tier (or of `kind`), with shadowing and trust. Never throws. */
  list(options?: { kind?: ItemKind }): ItemListing[];
  /** The file of the item that resolves for `kind`/`name`, or `undefined`. Never throws. */
  locate(kind: ItemKind, name: string): { tier: ItemTier; path: string } | undefined;
  /**
   * Every hook file (`hooks/**\/*.yaml`) of every tier, highest tier first and by name within
   * one, read and trust-checked like any item (unsigned project and user files refused under
   * `policy.require_signatures`); not parsed (`loadHooks` in src/hooks does that).
   */
  hookFiles(): {
    tier: ItemTier;
    path: string;
    display: string;
    text: string;
    source: ItemSource;
  }[];
}

/** Builds the item space of `workspace`; touches no file until an item is asked for. */
export function createItemSpace(options: ItemSpaceOptions): ItemSpace {
  const workspace = resolve(options.workspace);
  const home = resolve(options.home ?? homedir());
  const env = options.env ?? process.env;
  const roots: SpaceRoot[] = [{ tier: "project", dir: join(workspace, ".ai") }];
  if (join(home, ".ai") !== roots[0]!.dir) roots.push({ tier: "user", dir: join(home, ".ai") });
  roots.push({ tier: "builtin", dir: resolve(options.builtinDir ?? findBuiltinDir()) });
  const show = (path: string) => displayPath(path, workspace, home);

  const trusted = (): ReadonlyMap<string, KeyObject> => {
    if (options.trustedKeys) return options.trustedKeys;
    const dir = options.keysDir ?? resolveKeysDir({ cwd: workspace, env });
    return loadTrustedKeys(dir);
  };

  /** Reads and checks one item file; throws `ItemTrustError` for a refused one. */
  const readItem = (tier: ItemTier, path: string, requireSignatures: boolean) => {
    const display = show(path);
    let read: ReturnType<typeof readSignedItem>;
    try {
      read = readSignedItem(path, tier === "builtin" ? new Map() : trusted(), display);
    } catch (error) {
      if (error instanceof SpoolError) throw error;
      throw new ConfigError(
        "config.unreadable",
        `cannot read ${display}: ${describeError(error)}`,
        {
          hint: "Check the file and its permissions",
          cause: error,
        },
      );
    }
    const source: ItemSource = { path, tier, sha256: read.sha256 };
    if (tier !== "builtin") {
      if (read.check.status === "invalid") throw read.check.error;
      if (read.check.status === "verified") source.signed = { keyId: read.check.keyId };
      else if (requireSignatures) throw unsignedItemError(display);
    }
    return { text: read.bytes.toString("utf8"), source, display };
  };

  const configLayers = (strict: boolean) => {
    const layers: { layer: ConfigLayer; source: ItemSource; display: string }[] = [];
    for (const root of [...roots].reverse()) {
      const [file] = listItemFiles(root, "config");
      if (!file) continue;
      try {
        const { text, source, display } = readItem(root.tier, file.path, false);
        layers.push({ layer: parseConfigLayer(text, display), source, display });
      } catch (error) {
        if (strict) throw error;
      }
    }
    return layers;
  };

  const config = (): SpaceConfig => {
    const layers = configLayers(true);
    const merged = mergeConfigLayers(layers);
    if (merged.policy.requireSignatures) {
      const unsigned = layers.find(
        ({ source }) => source.tier !== "builtin" && source.signed === undefined,
      );
      if (unsigned) throw unsignedItemError(unsigned.display);
    }
    return merged;
  };

  const coordination = (): CoordinationConfig => {
    const { requireSignatures } = config().policy;
    const layers: { layer: CoordinationLayer; source: ItemSource }[] = [];
    for (const root of [...roots].reverse()) {
      const [file] = listItemFiles(root, "coordination");
      if (!file) continue;
      const { text, source, display } = readItem(root.tier, file.path, requireSignatures);
      layers.push({ layer: parseCoordinationLayer(text, display), source });
    }
    return mergeCoordinationLayers(layers);
  };

  const locate = (kind: ItemKind, name: string) => {
    if (!isItemName(name)) return undefined;
    for (const root of roots) {
      const path = itemPath(root, kind, name);
      if (isFile(path)) return { tier: root.tier, path };
    }
    return undefined;
  };

  const find = (kind: "directive" | "agent", name: string) => {
    if (!isItemName(name)) {
      throw new ConfigError("item.bad-name", `${JSON.stringify(name)} is not a ${kind} name`, {
        hint: "A name is letters, digits, _, . and -, with / between folders (streams/browser)",
      });
    }
    const found = locate(kind, name);
    if (found) return found;
    const known = [
      ...new Set(roots.flatMap((root) => listItemFiles(root, kind).map((f) => f.name))),
    ];
    const folders = roots.map((root) => show(join(root.dir, KIND_LAYOUT[kind].folder))).join(", ");
    throw new ConfigError(
      "item.not-found",
      `there is no ${kind} "${name}" in ${folders} (${known.length ? `there are: ${known.sort().join(", ")}` : `there are none`})`,
      {
        hint: `Create ${show(itemPath(roots[0]!, kind, name))}, or use one of the names listed`,
        details: { kind, name },
      },
    );
  };

  return {
    roots,
    locate,
    config,
    coordination,
    directive(name) {
      const { tier, path } = find("directive", name);
      const policy = config().policy;
      const { text, source, display } = readItem(tier, path, policy.requireSignatures);
      return parseDirective(text, {
        path,
        display,
        tier,
        sha256: source.sha256,
        expectedName: basename(name),
        ...(source.signed ? { signed: source.signed } : {}),
      });
    },
    manifest(name) {
      const { tier, path } = find("agent", name);
      const policy = config().policy;
      const { text, source, display } = readItem(tier, path, policy.requireSignatures);
      return parseAgentManifest(text, {
        name,
        path,
        display,
        tier,
        sha256: source.sha256,
        env,
        ...(source.signed ? { signed: source.signed } : {}),
      });
    },
    list(listOptions = {}) {
      const kinds = listOptions.kind ? [listOptions.kind] : [...ITEM_KINDS];
      const requireSignatures = mergeConfigLayers(configLayers(false)).policy.requireSignatures;
      const listings: ItemListing[] = [];
      for (const kind of kinds) {
        const byName = new Map<string, ItemListing[]>();
        for (const root of roots) {
          for (const file of listItemFiles(root, kind)) {
            const listing = describeItem(kind, file.name, root.tier, file.path, requireSignatures);
            const same = byName.get(file.name) ?? [];
            same.push(listing);
            byName.set(file.name, same);
          }
        }
        for (const same of byName.values()) {
          same.forEach((listing, index) => {
            listing.shadows = same.slice(index + 1).map((lower) => lower.tier);
            if (index > 0 && !isRootFileKind(kind)) {
              listing.active = false;
              listing.shadowedBy = same[0]!.tier;
            }
          });
          listings.push(...same);
        }
      }
      return listings;
    },
    hookFiles() {
      const { requireSignatures } = config().policy;
      return roots.flatMap((root) =>
        listItemFiles(root, "hook").map((file) => {
          const { text, source, display } = readItem(root.tier, file.path, requireSignatures);
          return { tier: root.tier, path: file.path, display, text, source };
        }),
      );
    },
  };

  function describeItem(
    kind: ItemKind,
    name: string,
    tier: ItemTier,
    path: string,
    requireSignatures: boolean,
  ): ItemListing {
    const listing: ItemListing = {
      kind,
      name,
      tier,
      path,
      display: show(path),
      active: true,
      shadows: [],
      signature: tier === "builtin" ? "builtin" : "unsigned",
    };
    try {
      const { text, source, display } = readItem(tier, path, requireSignatures);
      if (source.signed) {
        listing.signature = "verified";
        listing.keyId = source.signed.keyId;
      }
      if (kind === "directive") {
        parseDirective(text, { path, display, tier, expectedName: basename(name) });
      } else if (kind === "agent") {
        parseAgentManifest(text, { name, path, display, tier, env });
      } else if (kind === "config") {
        parseConfigLayer(text, display);
      } else if (kind === "coordination") {
        parseCoordinationLayer(text, display);
      } else {
        options.itemChecks?.[kind]?.(text, { path, display, tier });
      }
    } catch (error) {
      if (error instanceof ItemTrustError && error.reason !== "unsigned") {
        listing.signature = "invalid";
      }
      listing.problem = describeError(error);
    }
    return listing;
  }
}
