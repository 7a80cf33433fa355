import type Database from "better-sqlite3";
import { StoreError } from "../../spec/index.js";

/** The schema version this code reads and writes. */
export const SQLITE_SCHEMA_VERSION = 3;

/**
 * Version 2: each continuity's lease (`holder` null once released; `expires_at` in ms since the
 * epoch on the lease clock). Created by version 1's stores when they are opened.
 */
const LEASES_DDL = `
CREATE TABLE IF NOT EXISTS leases (
  continuity TEXT PRIMARY KEY,
  token INTEGER NOT NULL,
  holder TEXT,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * Version 3: the content of small artifacts, kept in the database instead of a file beside it
 * (one insert instead of five file operations: a step's bundle manifest is a few hundred bytes).
 * Created by older stores when they are opened; their file artifacts stay where they are.
 */
const ARTIFACT_BLOBS_DDL = `
CREATE TABLE IF NOT EXISTS artifact_blobs (
  hash TEXT PRIMARY KEY,
  content BLOB NOT NULL
) WITHOUT ROWID;
`;

const DDL = `
CREATE TABLE spool_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  continuity TEXT NOT NULL,
  stream_kind TEXT NOT NULL,
  stream_id TEXT NOT NULL,
  type TEXT NOT NULL,
  ts TEXT NOT NULL,
  actor TEXT,
  origin TEXT,
  criticality TEXT NOT NULL,
  data TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX events_by_continuity ON events (continuity, seq);
CREATE INDEX events_by_stream ON events (stream_kind, stream_id, seq) WHERE stream_kind <> 'continuity';
CREATE TABLE continuities (
  continuity TEXT PRIMARY KEY,
  events INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  last_at TEXT NOT NULL,
  head_hash TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE artifacts (
  hash TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  media_type TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
`;

/**
 * Creates the schema in an empty database, or checks that an existing one is a Spool log this
 * code can read. Runs in an immediate transaction so two processes opening a new file race safely.
 * With `readOnly` (a store this user cannot write), only checks, in a read transaction: a store
 * that would need creating or upgrading is refused with `store.read-only`.
 */
export function ensureSqliteSchema(db: Database.Database, file: string, readOnly = false): void {
  const check = db.transaction(() => {
    const tables = (
      db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[]
    ).sort();
    if (tables.length === 0) {
      if (readOnly) throw readOnlyStore(file, "it holds no Spool log yet, and creating one");
      db.exec(DDL);
      db.exec(LEASES_DDL);
      db.exec(ARTIFACT_BLOBS_DDL);
      const insert = db.prepare("INSERT INTO spool_meta (key, value) VALUES (?, ?)");
      insert.run("format", "spool-log");
      insert.run("schema_version", String(SQLITE_SCHEMA_VERSION));
      insert.run("created_at", new Date().toISOString());
      return;
    }
    if (!tables.includes("spool_meta")) {
      throw new StoreError(
        "store.foreign-database",
        `${file} is a SQLite database but not a Spool log (it holds ${tables.slice(0, 5).join(", ")})`,
        {
          hint: "Point --db (or SPOOL_DB) at a Spool store or at a path where a new one can be created",
        },
      );
    }
    const meta = new Map(
      (
        db.prepare("SELECT key, value FROM spool_meta").all() as Array<{
          key: string;
          value: string;
        }>
      ).map((row) => [row.key, row.value]),
    );
    if (meta.get("format") !== "spool-log") {
      throw new StoreError(
        "store.foreign-database",
        `${file} has a spool_meta table but is not a Spool log`,
        {
          hint: "Point --db (or SPOOL_DB) at a Spool store",
        },
      );
    }
    const version = Number(meta.get("schema_version"));
    if (!Number.isInteger(version) || version > SQLITE_SCHEMA_VERSION) {
      throw new StoreError(
        "store.schema-too-new",
        `${file} uses log schema version ${meta.get("schema_version")}; this Spool reads version ${SQLITE_SCHEMA_VERSION}`,
        {
          hint: "Upgrade Spool to a version that knows this schema; the file was left untouched",
        },
      );
    }
    if (version < SQLITE_SCHEMA_VERSION) {
      if (readOnly) {
        throw readOnlyStore(file, `its log schema is version ${version}, and upgrading it`);
      }
      db.exec(LEASES_DDL);
      db.exec(ARTIFACT_BLOBS_DDL);
      db.prepare("UPDATE spool_meta SET value = ? WHERE key = 'schema_version'").run(
        String(SQLITE_SCHEMA_VERSION),
      );
    }
  });
  if (readOnly) check.deferred();
  else check.immediate();
}

function readOnlyStore(file: string, what: string): StoreError {
  return new StoreError(
    "store.read-only",
    `${file} can be read but not written: ${what} needs writing`,
    {
      hint: "Run this as a user who can write the file and its folder, or copy the store somewhere writable",
    },
  );
}
