import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, resolve } from "node:path";
import {
  displayPath,
  isItemName,
  parseAgentManifest,
  parseConfigLayer,
  parseDirective,
  SIGNATURE_SUFFIX,
  signItemFile,
} from "../../directives/index.js";
import { ConfigError } from "../../spec/index.js";
import { loadSigner, resolveKeysDir } from "../../transcript/index.js";
import {
  type CommandContext,
  DB_OPTION,
  NotFoundError,
  parseCommandArgs,
  UsageError,
} from "../context.js";
import type { CommandHelp } from "../usage.js";

/** Help of `spool sign`: for the integrator to register in `USAGE`. */
export const SIGN_USAGE: CommandHelp = {
  synopsis: "spool sign <file…> [--keys DIR]",
  text: `Usage: spool sign <file…> [--keys DIR]

Signs item files (directives, agent manifests, config.yaml, workflows, hooks) with your Ed25519
key, the one \`spool keys init\` creates. The signature covers every byte of the file and is
written beside it as <file>.sig; change the file and it is refused until you sign it again.
Directives, agent manifests and config.yaml are checked first: a malformed file is not signed.

Options:
  --keys <dir>           Where the key pair lives (default: $SPOOL_KEYS, then keys/ beside
                         a SQLite store, i.e. ./.spool/keys/)
  --db <dir | file.db | postgres://…>
                         Where the log lives (only to find the default keys directory)
  -h, --help             Show this help

Examples:
  spool sign .ai/directives/researcher.md
  spool sign .ai/agents/*.yaml .ai/config.yaml
`,
};

/**
 * `spool sign <file…> [--keys DIR]`: checks each file by its kind (a `.md` under `directives/`,
 * a `.yaml` under `agents/`, a `config.yaml`) and writes `<file>.sig` with the whole-file
 * signature; prints one line per file and returns 0. Throws `ConfigError` when there is no key
 * (exit 2) or a file is malformed (nothing after it is signed), `NotFoundError` for a missing
 * file, `UsageError` for no files or a `.sig` file.
 */
export async function signCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "sign";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    keys: { type: "string" },
  });
  if (positionals.length === 0) throw new UsageError(command, "name the file(s) to sign");
  const keysDir = resolveKeysDir({
    cwd: ctx.io.cwd,
    env: ctx.io.env,
    db: values.db,
    keys: values.keys,
  });
  const signer = loadSigner(keysDir);
  if (!signer) {
    throw new ConfigError("keys.missing", `there is no signing key in ${keysDir}`, {
      hint: `Create one with \`spool keys init${values.keys ? ` --keys ${values.keys}` : ""}\``,
    });
  }
  const home = ctx.io.env.HOME || homedir();
  for (const given of positionals) {
    const path = resolve(ctx.io.cwd, given);
    const display = displayPath(path, ctx.io.cwd, home);
    if (path.endsWith(SIGNATURE_SUFFIX)) {
      throw new UsageError(command, `${given} is a signature; sign the item it belongs to`);
    }
    if (!isRegularFile(path)) {
      throw new NotFoundError(`there is no file ${display}`, "Check the path");
    }
    checkItem(path, display, ctx.io.env);
    const { signature, signaturePath } = signItemFile(path, signer);
    ctx.out(
      `Signed ${display} with key ${signature.key_id} (sha256 ${signature.sha256.slice(0, 12)}…) -> ${displayPath(signaturePath, ctx.io.cwd, home)}`,
    );
  }
  return 0;
}

/** Parses the file as the item its place says it is; throws the item's `ConfigError`. */
function checkItem(path: string, display: string, env: Record<string, string | undefined>): void {
  const name = basename(path);
  const text = readFileSync(path, "utf8");
  if (name === "config.yaml") parseConfigLayer(text, display);
  else if (name.endsWith(".md") && hasFolder(path, "directives")) {
    parseDirective(text, { path, display, expectedName: name.slice(0, -3) });
  } else if (name.endsWith(".yaml") && hasFolder(path, "agents")) {
    const agent = name.slice(0, -5);
    if (isItemName(agent)) parseAgentManifest(text, { name: agent, path, display, env });
  }
}

function hasFolder(path: string, folder: string): boolean {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    if (basename(dir) === folder) return true;
  }
  return false;
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
