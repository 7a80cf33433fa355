import { createHash } from "node:crypto";
import type pg from "pg";
import { StoreError } from "../../spec/index.js";

/** The schema version this code reads and writes. */
export const POSTGRES_SCHEMA_VERSION = 2;

/** The value of `format` in `spool_meta`: what marks a schema as a Spool log. */
const FORMAT = "spool-log";

/** Schema-qualified, quoted names of Spool's tables, fixed once per backend. */
export interface PostgresTables {
  schema: string;
  meta: string;
  head: string;
  events: string;
  continuities: string;
  artifacts: string;
  chunks: string;
  leases: string;
}

/** Quotes an identifier for SQL text (the schema name comes from configuration). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The tables of a Spool log in `schema`. */
export function postgresTables(schema: string): PostgresTables {
  const q = quoteIdentifier(schema);
  return {
    schema: q,
    meta: `${q}.spool_meta`,
    head: `${q}.spool_head`,
    events: `${q}.spool_events`,
    continuities: `${q}.spool_continuities`,
    artifacts: `${q}.spool_artifacts`,
    chunks: `${q}.spool_artifact_chunks`,
    leases: `${q}.spool_leases`,
  };
}

/**
 * Migrations, in order: entry `i` takes a schema from version `i` to `i + 1`. A later version
 * appends an entry; a database is brought forward one step at a time under the schema lock.
 */
const MIGRATIONS: ReadonlyArray<(t: PostgresTables) => string[]> = [
  (t) => [
    `CREATE SCHEMA IF NOT EXISTS ${t.schema}`,
    `CREATE TABLE IF NOT EXISTS ${t.meta} (key text PRIMARY KEY, value text)`,
    `CREATE TABLE IF NOT EXISTS ${t.head} (id int PRIMARY KEY CHECK (id = 1), last_seq bigint NOT NULL)`,
    `INSERT INTO ${t.head} (id, last_seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`,
    `CREATE TABLE IF NOT EXISTS ${t.events} (
      seq bigint PRIMARY KEY,
      id text NOT NULL,
      continuity text NOT NULL,
      stream_kind text NOT NULL,
      stream_id text NOT NULL,
      type text NOT NULL,
      ts text NOT NULL,
      actor text,
      origin text,
      criticality text NOT NULL,
      data text NOT NULL,
      hash text NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS spool_events_by_continuity ON ${t.events} (continuity, seq)`,
    // Partial: a continuity's own stream is served by the continuity index.
    `CREATE INDEX IF NOT EXISTS spool_events_by_stream ON ${t.events} (stream_kind, stream_id, seq) WHERE stream_kind <> 'continuity'`,
    `CREATE TABLE IF NOT EXISTS ${t.continuities} (
      continuity text PRIMARY KEY,
      events bigint NOT NULL,
      first_seq bigint NOT NULL,
      last_seq bigint NOT NULL,
      created_at text NOT NULL,
      last_at text NOT NULL,
      head_hash text NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS ${t.artifacts} (
      hash text PRIMARY KEY,
      size bigint NOT NULL,
      media_type text NOT NULL,
      created_at text NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (
      hash text NOT NULL,
      idx int NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (hash, idx)
    )`,
  ],
  // Version 2: each continuity's lease (`holder` null once released; `expires_at` in ms since
  // the epoch on the lease clock).
  (t) => [
    `CREATE TABLE IF NOT EXISTS ${t.leases} (
      continuity text PRIMARY KEY,
      token bigint NOT NULL,
      holder text,
      expires_at bigint NOT NULL
    )`,
  ],
];

/**
 * Creates the schema in an empty database (or schema), brings an older Spool schema forward, or
 * checks that an existing one is a Spool log this code can read.
 *
 * Runs in one transaction under an advisory lock keyed by the schema name, so several processes
 * opening the same empty database at once create it exactly once and the rest see it whole.
 * Raises `store.foreign-database` when the schema holds other tables but no `spool_meta`, and
 * `store.schema-too-new` when a newer Spool wrote it; in both cases nothing is changed.
 */
export async function ensurePostgresSchema(
  client: pg.ClientBase,
  schema: string,
  tables: PostgresTables,
  location: string,
): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [schemaLockKey(schema)]);
    const relations = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_catalog.pg_class c
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
        ORDER BY c.relname`,
      [schema],
    );
    const names = relations.rows.map((row) => row.name);
    let version = 0;
    if (names.includes("spool_meta")) {
      version = await readVersion(client, tables, location);
    } else if (names.length > 0) {
      const listed = names.slice(0, 5).join(", ") + (names.length > 5 ? ", …" : "");
      throw new StoreError(
        "store.foreign-database",
        `${location} is a PostgreSQL database but not a Spool log: schema ${schema} holds other tables (${listed})`,
        {
          hint: "Point --db (or SPOOL_DB) at an empty database or a Spool one, or choose another schema",
        },
      );
    }
    for (let step = version; step < POSTGRES_SCHEMA_VERSION; step += 1) {
      for (const statement of MIGRATIONS[step]!(tables)) await client.query(statement);
    }
    if (version === 0) {
      await client.query(
        `INSERT INTO ${tables.meta} (key, value) VALUES ('format', $1), ('schema_version', $2), ('created_at', $3)`,
        [FORMAT, String(POSTGRES_SCHEMA_VERSION), new Date().toISOString()],
      );
    } else if (version < POSTGRES_SCHEMA_VERSION) {
      await client.query(`UPDATE ${tables.meta} SET value = $1 WHERE key = 'schema_version'`, [
        String(POSTGRES_SCHEMA_VERSION),
      ]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

async function readVersion(
  client: pg.ClientBase,
  tables: PostgresTables,
  location: string,
): Promise<number> {
  const rows = await client.query<{ key: string; value: string | null }>(
    `SELECT key, value FROM ${tables.meta}`,
  );
  const meta = new Map(rows.rows.map((row) => [row.key, row.value]));
  if (meta.get("format") !== FORMAT) {
    throw new StoreError(
      "store.foreign-database",
      `${location} has a spool_meta table but is not a Spool log`,
      {
        hint: "Point --db (or SPOOL_DB) at an empty database or a Spool one",
      },
    );
  }
  const raw = meta.get("schema_version");
  const version = Number(raw);
  if (!Number.isInteger(version) || version < 1 || version > POSTGRES_SCHEMA_VERSION) {
    throw new StoreError(
      "store.schema-too-new",
      `${location} uses log schema version ${raw}; this Spool reads version ${POSTGRES_SCHEMA_VERSION}`,
      {
        hint: "Upgrade Spool to a version that knows this schema; the database was left untouched",
      },
    );
  }
  return version;
}

/** A stable 64-bit advisory lock key per schema, so different schemas do not block each other. */
function schemaLockKey(schema: string): string {
  return createHash("sha256")
    .update(`spool.schema:${schema}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}
