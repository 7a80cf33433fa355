import { homedir } from "node:os";
import {
  createItemSpace,
  ITEM_KINDS,
  type ItemKind,
  type ItemListing,
  isRootFileKind,
} from "../../directives/index.js";
import { parseHookFile } from "../../hooks/index.js";
import { resolveKeysDir } from "../../transcript/index.js";
import { type CommandContext, DB_OPTION, parseCommandArgs, UsageError } from "../context.js";
import { oneLine, renderTable } from "../format.js";
import type { CommandHelp } from "../usage.js";

/** Help of `spool items`: for the integrator to register in `USAGE`. */
export const ITEMS_USAGE: CommandHelp = {
  synopsis: "spool items [--kind KIND] [--json] [--keys DIR]",
  text: `Usage: spool items [--kind KIND] [--json] [--keys DIR]

Lists the items of the three spaces, highest precedence first: the project's .ai/, your ~/.ai/
and Spool's built-in items. For each: kind, name, tier, signature (verified, unsigned, invalid,
or builtin: trusted) and path. An item hidden by the same item in a higher tier is marked
"shadowed by <tier>"; config.yaml and coordination.yaml are merged, not shadowed. Each item is
also checked: a signature that does not match the file, an unsigned item under
policy.require_signatures, or a malformed file is printed under its row. Exit code 1 when any
item has such a problem.

Options:
  --kind <kind>          Only items of this kind: directive, agent, config, coordination,
                         workflow or hook
  --json                 Print one JSON object per item
  --keys <dir>           Where the trusted public keys are (default: $SPOOL_KEYS, then keys/
                         beside a SQLite store, i.e. ./.spool/keys/, and its retired/ folder)
  --db <dir | file.db | postgres://…>
                         Where the log lives (only to find the default keys directory)
  -h, --help             Show this help

Examples:
  spool items
  spool items --kind directive --json
`,
};

/**
 * `spool items [--kind K] [--json] [--keys DIR]`: lists every item file of the project, user
 * (`$HOME/.ai`) and built-in tiers with shadowing and signature status, and checks each. Returns
 * 0, or 1 when any item would be refused or is malformed. Never throws for a bad item (that is
 * a row); throws `UsageError` for bad arguments.
 */
export async function itemsCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "items";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    kind: { type: "string" },
    json: { type: "boolean" },
    keys: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(positionals[0])}`);
  }
  const kind = values.kind;
  if (kind !== undefined && !(ITEM_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(
      command,
      `--kind must be one of ${ITEM_KINDS.join(", ")}, not ${JSON.stringify(kind)}`,
    );
  }
  const space = createItemSpace({
    workspace: ctx.io.cwd,
    home: ctx.io.env.HOME || homedir(),
    env: ctx.io.env,
    keysDir: resolveKeysDir({ cwd: ctx.io.cwd, env: ctx.io.env, db: values.db, keys: values.keys }),
    itemChecks: { hook: parseHookFile },
  });
  const listings = space.list(kind ? { kind: kind as ItemKind } : {});
  const failed = listings.some((listing) => listing.problem !== undefined);
  if (values.json) {
    for (const listing of listings) ctx.out(JSON.stringify(listing));
    return failed ? 1 : 0;
  }
  if (listings.length === 0) {
    ctx.err(`No ${kind ? `${kind} ` : ""}items found.`);
    return 0;
  }
  const rows = listings.map((listing) => [
    listing.kind,
    oneLine(listing.name),
    listing.tier,
    signatureText(listing),
    `${oneLine(listing.display)}${shadowText(listing)}`,
  ]);
  const lines = renderTable(["KIND", "NAME", "TIER", "SIGNATURE", "PATH"], rows, ctx.style)
    .split("\n")
    .filter((line) => line !== "");
  ctx.out(lines[0]!);
  listings.forEach((listing, index) => {
    const line = lines[index + 1]!;
    ctx.out(listing.active ? line : ctx.style.dim(line));
    if (listing.problem) ctx.out(`  ${ctx.style.red("!")} ${oneLine(listing.problem)}`);
  });
  return failed ? 1 : 0;
}

function signatureText(listing: ItemListing): string {
  if (listing.signature === "verified") return `verified (${listing.keyId})`;
  return listing.signature;
}

function shadowText(listing: ItemListing): string {
  if (listing.shadowedBy) return `  (shadowed by ${listing.shadowedBy})`;
  if (isRootFileKind(listing.kind) && listing.shadows.length > 0) {
    return `  (merged over ${listing.shadows.join(", ")})`;
  }
  if (listing.shadows.length > 0) return `  (shadows ${listing.shadows.join(", ")})`;
  return "";
}
