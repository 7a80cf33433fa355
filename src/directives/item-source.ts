/** The three tiers of item spaces, highest precedence first. */
export const ITEM_TIERS = ["project", "user", "builtin"] as const;

/**
 * Where an item space is: `project` is `.ai/` in the workspace, `user` is `~/.ai/`, `builtin` is
 * `builtin/` shipped with Spool (always trusted).
 */
export type ItemTier = (typeof ITEM_TIERS)[number];

/** The kinds of item a space holds, and where each lives inside it. */
export const ITEM_KINDS = [
  "directive",
  "agent",
  "config",
  "coordination",
  "workflow",
  "hook",
] as const;

/**
 * One kind of item: `directive` (`directives/**\/*.md`), `agent` (`agents/**\/*.yaml`),
 * `config` (`config.yaml`), `coordination` (`coordination.yaml`), `workflow`
 * (`workflows/**\/*.yaml`) and `hook` (`hooks/**\/*.yaml`). `config` and `coordination` are one
 * file at the root of a space, merged across tiers rather than shadowed.
 * Workflows and hooks are listed, hashed and verified here; their contents belong to the modules
 * that run them.
 */
export type ItemKind = (typeof ITEM_KINDS)[number];

/** Where a loaded item came from, and what its signature proved. */
export interface ItemSource {
  /** Absolute path of the file. */
  path: string;
  tier: ItemTier;
  /** sha256 (hex) of the whole file's bytes, as loaded. */
  sha256: string;
  /** Present when a valid signature by a trusted key covers exactly these bytes. */
  signed?: { keyId: string };
}
