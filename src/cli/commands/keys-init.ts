import { join } from "node:path";
import {
  initKeys,
  RETIRED_KEYS_DIR,
  resolveKeysDir,
  retireCurrentKey,
} from "../../transcript/index.js";
import { type CommandContext, DB_OPTION, parseCommandArgs, UsageError } from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import type { CommandHelp } from "../usage.js";

/** Help of `spool keys` (the group): for the integrator to register in `USAGE`. */
export const KEYS_USAGE: CommandHelp = {
  synopsis: "spool keys init [--keys DIR] [--force]",
  text: `Usage: spool keys <command> [options]

Commands:
  keys init              Create the Ed25519 key pair that signs checkpoints

Run \`spool keys init --help\` for its options.
`,
};

/** Help of `spool keys init`: for the integrator to register in `USAGE`. */
export const KEYS_INIT_USAGE: CommandHelp = {
  synopsis: "spool keys init [--keys DIR] [--force]",
  text: `Usage: spool keys init [--keys DIR] [--force]

Creates the Ed25519 key pair that signs checkpoints of the continuity log and prints its key id
and file paths (never the private key). The private key file is readable by you alone (0600);
give the public key (*.pub.pem) to whoever verifies. Refuses to replace an existing key unless
--force; a replaced key's public half is kept in <dir>/retired/, so its checkpoints still verify.

Options:
  --keys <dir>           Where the key pair lives (default: $SPOOL_KEYS, then keys/ beside
                         a SQLite store, i.e. ./.spool/keys/)
  --force                Replace an existing key pair (keeping its public key)
${DB_HELP_LINES}

Examples:
  spool keys init
  spool keys init --keys ~/.config/spool/keys
`,
};

/**
 * `spool keys init [--keys DIR] [--force]`: creates the checkpoint key pair in the keys directory
 * (`resolveKeysDir`) and prints the key id and both paths; returns 0. Never prints the private
 * key. Throws `ConfigError` (`keys.exist`, exit 2) when a key exists and `--force` is absent, and
 * `UsageError` for stray arguments.
 */
export async function keysInit(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "keys init";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    keys: { type: "string" },
    force: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      command,
      `unexpected argument ${JSON.stringify(positionals[0])} (use --keys to choose the directory)`,
    );
  }
  const dir = resolveKeysDir({
    cwd: ctx.io.cwd,
    env: ctx.io.env,
    db: values.db,
    keys: values.keys,
  });
  const retired = values.force ? retireCurrentKey(dir) : undefined;
  const created = initKeys(dir, { force: values.force === true });
  ctx.out(`Created checkpoint key ${created.keyId}`);
  ctx.out(`  private key: ${created.privateKeyPath} (mode 0600; keep it secret)`);
  ctx.out(`  public key:  ${created.publicKeyPath} (give it to whoever verifies)`);
  if (retired !== undefined && retired !== created.keyId) {
    ctx.out(
      `  replaced key ${retired}; its public key is kept in ${join(dir, RETIRED_KEYS_DIR)} so its checkpoints still verify`,
    );
  }
  return 0;
}
