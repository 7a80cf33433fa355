import { createPublicKey, type KeyObject } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { resolveStoreLocation, sqlitePaths } from "../log/index.js";
import { ConfigError } from "../spec/index.js";
import { keyIdOf, PUBLIC_KEY_FILE } from "./signing.js";

/** Where to look for the checkpoint key pair; see `resolveKeysDir`. */
export interface KeysDirOptions {
  /** The workspace: where relative paths and the default `.spool/keys/` are resolved. */
  cwd: string;
  /** Read for `SPOOL_KEYS`, and for `SPOOL_DB` when `db` is absent. */
  env: Record<string, string | undefined>;
  /** The `--db` option: a SQLite directory or file, or a `postgres://` URL. */
  db?: string | undefined;
  /** The `--keys` option; wins over everything else. */
  keys?: string | undefined;
}

/**
 * The directory that holds the checkpoint key pair, resolved option → environment → default:
 * `keys` (`--keys DIR`), then `SPOOL_KEYS`, then beside the SQLite store (`<store dir>/keys/`,
 * where the store is `db`, else `SPOOL_DB`, else `<cwd>/.spool/`, so the default is
 * `<cwd>/.spool/keys/`), and `<cwd>/.spool/keys/` for a PostgreSQL store. Relative paths are
 * resolved against `cwd`. Touches nothing but a `stat` of the store path; throws `ConfigError`
 * for an empty `--keys`/`SPOOL_KEYS` or a store URL of an unsupported scheme.
 */
export function resolveKeysDir(options: KeysDirOptions): string {
  const { cwd, env } = options;
  const explicit = options.keys ?? env.SPOOL_KEYS;
  if (explicit !== undefined) {
    if (explicit.trim() === "") {
      throw new ConfigError("config.keys", "the keys directory is empty", {
        hint: "Pass --keys with a directory, or unset SPOOL_KEYS",
      });
    }
    return resolve(cwd, explicit);
  }
  const location = resolveStoreLocation({ db: options.db, cwd, env });
  if (location.kind === "postgres") return join(resolve(cwd), ".spool", "keys");
  return join(dirname(sqlitePaths(location.target).file), "keys");
}

/** Sub-directory of the keys directory that keeps the public keys of replaced key pairs. */
export const RETIRED_KEYS_DIR = "retired";

/**
 * Keeps a copy of the current public key in `<dir>/retired/<key id>.pub.pem` (before
 * `initKeys(dir, { force: true })` replaces the pair), so checkpoints it signed stay verifiable.
 * Returns the retired key id, or `undefined` when there is no key pair in `dir`.
 */
export function retireCurrentKey(dir: string): string | undefined {
  const current = join(dir, PUBLIC_KEY_FILE);
  if (!existsSync(current)) return undefined;
  let keyId: string;
  try {
    keyId = keyIdOf(createPublicKey(readFileSync(current, "utf8")));
  } catch {
    return undefined;
  }
  mkdirSync(join(dir, RETIRED_KEYS_DIR), { recursive: true, mode: 0o700 });
  copyFileSync(current, join(dir, RETIRED_KEYS_DIR, `${keyId}.pub.pem`));
  return keyId;
}

/**
 * Every public key a verifier trusts in `dir`: the current pair's and the retired ones, by key
 * id. A missing directory gives an empty map; an unreadable or malformed key file throws
 * `ConfigError` naming it.
 */
export function loadTrustedKeys(dir: string): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const files = [join(dir, PUBLIC_KEY_FILE)];
  const retired = join(dir, RETIRED_KEYS_DIR);
  if (existsSync(retired)) {
    for (const name of readdirSync(retired).sort()) {
      if (name.endsWith(".pub.pem")) files.push(join(retired, name));
    }
  }
  for (const file of files) {
    if (!existsSync(file)) continue;
    try {
      const key = createPublicKey(readFileSync(file, "utf8"));
      keys.set(keyIdOf(key), key);
    } catch (error) {
      throw new ConfigError("keys.bad", `cannot read the public key ${file}`, {
        cause: error,
        hint: "Replace it with a PEM (SPKI) Ed25519 public key, or remove it",
      });
    }
  }
  return keys;
}
