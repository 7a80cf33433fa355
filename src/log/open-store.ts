import { join, resolve } from "node:path";
import { ConfigError } from "../spec/index.js";
import type { Durability, EventStore } from "./event-store.js";
import { createEventStore, type LogStoreOptions } from "./log-store.js";
import { openSqliteBackend } from "./sqlite/sqlite-backend.js";

/** Options of `openEventStore`. */
export interface OpenStoreOptions extends LogStoreOptions {
  /**
   * A directory or `.db` file for SQLite, or a `postgres://` / `postgresql://` URL. Default: the
   * `SPOOL_DB` environment variable, then `.spool/` in `cwd`.
   */
  db?: string;
  /** Where a relative path and the default `.spool/` are resolved (default `process.cwd()`). */
  cwd?: string;
  /** What a resolved append survives; see docs/log.md (default `strict`). */
  durability?: Durability;
  /** Environment to read `SPOOL_DB` and `SPOOL_DURABILITY` from (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** Where the store named by `options` lives: `{ kind, target }` without opening anything. */
export function resolveStoreLocation(options: Pick<OpenStoreOptions, "db" | "cwd" | "env"> = {}): {
  kind: "sqlite" | "postgres";
  target: string;
} {
  const env = options.env ?? process.env;
  const raw = options.db ?? env.SPOOL_DB ?? join(options.cwd ?? process.cwd(), ".spool");
  if (raw.trim() === "") {
    throw new ConfigError("config.db", "the store location is empty", {
      hint: "Pass --db with a directory, a .db file or a postgres:// URL, or unset SPOOL_DB",
    });
  }
  if (/^postgres(ql)?:\/\//i.test(raw)) return { kind: "postgres", target: raw };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new ConfigError(
      "config.db",
      `unsupported store URL scheme in ${raw.split("://")[0]}://…`,
      {
        hint: "Use a directory or .db file for SQLite, or a postgres:// URL",
      },
    );
  }
  return { kind: "sqlite", target: resolve(options.cwd ?? process.cwd(), raw) };
}

/**
 * Opens the event store named by `options` (creating an empty SQLite store when absent).
 * Raises `StoreError` with a fix for an unreachable server, a foreign or damaged file, or a schema
 * written by a newer Spool.
 */
export async function openEventStore(options: OpenStoreOptions = {}): Promise<EventStore> {
  const env = options.env ?? process.env;
  const durability = options.durability ?? parseDurability(env.SPOOL_DURABILITY);
  const location = resolveStoreLocation(options);
  const backend =
    location.kind === "postgres"
      ? await (await import("./postgres/postgres-backend.js")).openPostgresBackend({
          url: location.target,
          durability,
        })
      : openSqliteBackend({ path: location.target, durability });
  return createEventStore(backend, options);
}

function parseDurability(value: string | undefined): Durability {
  if (value === undefined || value === "" || value === "strict") return "strict";
  if (value === "fast") return "fast";
  throw new ConfigError(
    "config.durability",
    `SPOOL_DURABILITY=${JSON.stringify(value)} is not a durability setting`,
    {
      hint: "Use strict (survives a power cut) or fast (survives a killed process)",
    },
  );
}
