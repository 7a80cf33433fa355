import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, relative, resolve, sep } from "node:path";
import {
  displayPath,
  ITEM_KINDS,
  type ItemKind,
  isItemName,
  KIND_LAYOUT,
  parseAgentManifest,
  parseConfigLayer,
  parseCoordinationLayer,
  parseDirective,
  ROOT_FILES,
  SIGNATURE_SUFFIX,
  signItemFile,
} from "../../directives/index.js";
import { parseHookFile } from "../../hooks/index.js";
import { ConfigError } from "../../spec/index.js";
import { loadSigner, resolveKeysDir } from "../../transcript/index.js";
import { parseWorkflow } from "../../workflows/index.js";
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

Signs item files with your Ed25519 key, the one \`spool keys init\` creates: directives (.md
under directives/), agent manifests (.yaml under agents/), workflows (.yaml under workflows/),
hooks (.yaml under hooks/), config.yaml and coordination.yaml. Any other file is refused. The
signature covers every byte of the file and is written beside it as <file>.sig; change the file
and it is refused until you sign it again. Each file is checked as the item it is first: a
malformed one is not signed.

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
 * `spool sign <file…> [--keys DIR]`: checks each file as the item its place makes it (a `.md`
 * under `directives/`, a `.yaml` under `agents/`, `workflows/` or `hooks/`, a `config.yaml` or
 * `coordination.yaml`) and writes `<file>.sig` with the whole-file signature; prints one line per
 * file and returns 0. Throws `ConfigError` when there is no key (exit 2) or an item is malformed
 * (nothing after it is signed), `NotFoundError` for a missing file, `UsageError` for no files, a
 * `.sig` file or a file that is no item. Every file is checked before any is signed.
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
  const files = positionals.map((given) => {
    const path = resolve(ctx.io.cwd, given);
    const display = displayPath(path, ctx.io.cwd, home);
    if (path.endsWith(SIGNATURE_SUFFIX)) {
      throw new UsageError(command, `${given} is a signature; sign the item it belongs to`);
    }
    if (!isRegularFile(path)) {
      throw new NotFoundError(`there is no file ${display}`, "Check the path");
    }
    checkItem(given, path, display, ctx.io.env);
    return { path, display };
  });
  for (const { path, display } of files) {
    const { signature, signaturePath } = signItemFile(path, signer);
    ctx.out(
      `Signed ${display} with key ${signature.key_id} (sha256 ${signature.sha256.slice(0, 12)}…) -> ${displayPath(signaturePath, ctx.io.cwd, home)}`,
    );
  }
  return 0;
}

/** An item file's kind and name, as its place in a space says. */
interface ItemFileAt {
  kind: ItemKind;
  name: string;
}

/**
 * What item `path` is by its place: `config.yaml` or `coordination.yaml`, or a file with its
 * kind's extension under the kind's folder (`directives/…/x.md`, `agents/x.yaml`,
 * `workflows/x.yaml`, `hooks/x.yaml`) whose name below that folder is an item name. Undefined
 * for anything else (`notes.txt`, a `.md` outside `directives/`, `/etc/hosts`).
 */
function itemFileAt(path: string): ItemFileAt | undefined {
  const file = basename(path);
  for (const kind of ["config", "coordination"] as const) {
    if (file === ROOT_FILES[kind]) return { kind, name: kind };
  }
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    for (const kind of ITEM_KINDS) {
      const { folder, extension } = KIND_LAYOUT[kind];
      if (folder === "" || basename(dir) !== folder || !file.endsWith(extension)) continue;
      const name = relative(dir, path).slice(0, -extension.length).split(sep).join("/");
      if (isItemName(name)) return { kind, name };
    }
  }
  return undefined;
}

/** The item files `spool sign` takes, for its refusal of any other file. */
const ITEM_FILES =
  "directives (.md under directives/), agent manifests (.yaml under agents/), workflows (.yaml under workflows/), hooks (.yaml under hooks/), config.yaml and coordination.yaml";

/**
 * Parses the file as the item its place says it is (throwing the item's own error: a malformed
 * item is not signed); refuses a file that is no item with a `UsageError`.
 */
function checkItem(
  given: string,
  path: string,
  display: string,
  env: Record<string, string | undefined>,
): void {
  const item = itemFileAt(path);
  if (!item) {
    throw new UsageError("sign", `${given} is not an item file: spool sign signs ${ITEM_FILES}`);
  }
  const text = readFileSync(path, "utf8");
  switch (item.kind) {
    case "config":
      return void parseConfigLayer(text, display);
    case "coordination":
      return void parseCoordinationLayer(text, display);
    case "directive": {
      const expectedName = item.name.split("/").at(-1)!;
      return void parseDirective(text, { path, display, expectedName });
    }
    case "agent":
      return void parseAgentManifest(text, { name: item.name, path, display, env });
    case "workflow":
      return void parseWorkflow(text, { source: display });
    case "hook":
      return void parseHookFile(text, { path, display, tier: "project" });
  }
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
