import pg from "pg";
import {
  bytesVector,
  cosine,
  type MemoryBackend,
  type MemoryScope,
  type ScoredEntry,
  TopK,
  vectorBytes,
} from "./memory-backend.js";
import type { IndexOperation, MemoryEntry, MemoryKind } from "./memory-entry.js";
import { MemoryError } from "./memory-error.js";
import { websearchText } from "./memory-query.js";

/** The schema version of the memory tables this code reads and writes. */
const SCHEMA_VERSION = 1;

/** Options of `openPostgresMemory`. */
export interface PostgresMemoryOptions {
  /** The store's URL (`postgres://…`); the password never appears in messages. */
  url: string;
  /** The schema holding the log's tables (default `public`): the memory tables go beside them. */
  schema?: string;
  /** Pooled connections (default 2). */
  poolSize?: number;
}

type EntryRow = {
  id: string;
  continuity: string;
  thread: string | null;
  kind: MemoryKind;
  ref: string;
  text: string;
  ts: string;
  seq: string | number;
  hash: string;
};

const ENTRY_COLUMNS = "id, continuity, thread, kind, ref, text, ts, seq, hash";
/** The most matches one search ranks: the newest ones, when a query matches more (as on SQLite). */
const CANDIDATES = 1000;

/**
 * Opens the memory index in the PostgreSQL database of a store, creating its tables
 * (`spool_memory_meta`, `spool_memory_entries`, `spool_memory_actors`) beside the log's when
 * absent. Full text by a stored `to_tsvector('english', text)` column under a GIN index, ranked
 * by `ts_rank_cd`; queries go through `websearch_to_tsquery`, which never raises on its input.
 * Shared by every process and machine that uses the store. Throws `MemoryError`
 * `memory.storage` when the server cannot be reached or the tables cannot be made.
 */
export async function openPostgresMemory(options: PostgresMemoryOptions): Promise<MemoryBackend> {
  const schema = `"${(options.schema ?? "public").replaceAll('"', '""')}"`;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 2,
    connectionTimeoutMillis: 5000,
    allowExitOnIdle: true,
    application_name: "spool-memory",
  });
  pool.on("error", () => {
    // A broken idle connection is dropped by the pool; the next query opens a new one.
  });
  const tables = {
    meta: `${schema}.spool_memory_meta`,
    entries: `${schema}.spool_memory_entries`,
    actors: `${schema}.spool_memory_actors`,
  };
  try {
    await ensureTables(pool, schema, tables);
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof MemoryError) throw error;
    throw storageError(error, "open the memory tables");
  }
  return new PostgresMemory(pool, tables);
}

type Tables = { meta: string; entries: string; actors: string };

async function ensureTables(pool: pg.Pool, schema: string, t: Tables): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1)::bigint)", [
      `spool-memory ${schema}`,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${t.meta} (key text PRIMARY KEY, value text NOT NULL)`,
    );
    await client.query(`CREATE TABLE IF NOT EXISTS ${t.entries} (
      id text PRIMARY KEY,
      continuity text NOT NULL,
      thread text,
      kind text NOT NULL,
      ref text NOT NULL,
      text text NOT NULL,
      ts text NOT NULL,
      seq bigint NOT NULL,
      hash text NOT NULL,
      tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
      vector_model text,
      vector bytea,
      UNIQUE (continuity, kind, ref)
    )`);
    await client.query(
      `CREATE INDEX IF NOT EXISTS spool_memory_entries_tsv ON ${t.entries} USING gin (tsv)`,
    );
    await client.query(`CREATE TABLE IF NOT EXISTS ${t.actors} (
      actor text NOT NULL, continuity text NOT NULL, PRIMARY KEY (actor, continuity))`);
    const found = await client.query<{ value: string }>(
      `SELECT value FROM ${t.meta} WHERE key = 'schema_version'`,
    );
    const version = found.rows[0]?.value;
    if (version === undefined) {
      await client.query(`INSERT INTO ${t.meta} (key, value) VALUES ('schema_version', $1)`, [
        String(SCHEMA_VERSION),
      ]);
    } else if (Number(version) > SCHEMA_VERSION) {
      throw new MemoryError(
        "memory.schema-too-new",
        `the memory tables are schema version ${version}; this Spool reads version ${SCHEMA_VERSION}`,
        { hint: "Upgrade Spool, or drop the spool_memory_* tables: they are rebuilt from the log" },
      );
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

class PostgresMemory implements MemoryBackend {
  readonly kind = "postgres" as const;
  readonly #pool: pg.Pool;
  readonly #t: Tables;

  constructor(pool: pg.Pool, tables: Tables) {
    this.#pool = pool;
    this.#t = tables;
  }

  async position(): Promise<number> {
    const result = await this.#query<{ value: string }>(
      `SELECT value FROM ${this.#t.meta} WHERE key = 'position'`,
    );
    return Number(result.rows[0]?.value ?? 0);
  }

  async apply(
    operations: readonly { seq: number; operation: IndexOperation }[],
    position: number,
  ): Promise<void> {
    const t = this.#t;
    const client = await this.#pool.connect().catch((error: unknown) => {
      throw storageError(error, "update the memory index");
    });
    try {
      await client.query("BEGIN");
      // One writer at a time: the position read below is the one this transaction moves on.
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1)::bigint)", [
        `spool-memory ${t.meta}`,
      ]);
      const found = await client.query<{ value: string }>(
        `SELECT value FROM ${t.meta} WHERE key = 'position'`,
      );
      const stored = Number(found.rows[0]?.value ?? 0);
      for (const { seq, operation } of operations) {
        if (seq <= stored) continue;
        await applyOne(client, t, operation);
      }
      if (position > stored) {
        await client.query(
          `INSERT INTO ${t.meta} (key, value) VALUES ('position', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
          [String(position)],
        );
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw storageError(error, "update the memory index");
    } finally {
      client.release();
    }
  }

  async search(
    terms: readonly string[],
    scope: MemoryScope,
    limit: number,
  ): Promise<ScoredEntry[]> {
    if (terms.length === 0 || limit <= 0) return [];
    const params: unknown[] = [websearchText(terms)];
    const where = scopeSql(scope, params, this.#t.actors);
    params.push(CANDIDATES, limit);
    // The GIN index finds the matches; ts_rank_cd (which reads each match's tsvector) ranks only
    // the newest CANDIDATES of them within the scope, so a broad query costs a bounded ranking.
    const result = await this.#query<EntryRow & { score: number }>(
      `SELECT ${ENTRY_COLUMNS}, ts_rank_cd(tsv, query) AS score
         FROM (SELECT ${ENTRY_COLUMNS}, tsv, query
                 FROM ${this.#t.entries}, websearch_to_tsquery('english', $1) AS query
                WHERE tsv @@ query${where}
                ORDER BY seq DESC
                LIMIT $${params.length - 1}) AS candidates
        ORDER BY score DESC, seq DESC
        LIMIT $${params.length}`,
      params,
    );
    return result.rows.map((row) => ({ entry: toEntry(row), score: Number(row.score) }));
  }

  async unembedded(model: string, limit: number): Promise<MemoryEntry[]> {
    const result = await this.#query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM ${this.#t.entries}
        WHERE vector_model IS NULL OR vector_model <> $1 ORDER BY seq LIMIT $2`,
      [model, limit],
    );
    return result.rows.map(toEntry);
  }

  async storeVectors(
    model: string,
    vectors: readonly { id: string; vector: Float32Array }[],
  ): Promise<void> {
    if (vectors.length === 0) return;
    await this.#query(
      `UPDATE ${this.#t.entries} AS e SET vector_model = $1, vector = v.vector
         FROM unnest($2::text[], $3::bytea[]) AS v(id, vector) WHERE e.id = v.id`,
      [model, vectors.map((item) => item.id), vectors.map((item) => vectorBytes(item.vector))],
    );
  }

  async nearest(
    model: string,
    vector: Float32Array,
    scope: MemoryScope,
    limit: number,
  ): Promise<ScoredEntry[]> {
    if (limit <= 0) return [];
    const params: unknown[] = [model];
    const where = scopeSql(scope, params, this.#t.actors);
    const result = await this.#query<{ id: string; vector: Buffer }>(
      `SELECT id, vector FROM ${this.#t.entries} WHERE vector_model = $1${where}`,
      params,
    );
    const top = new TopK<string>(limit);
    for (const row of result.rows) top.offer(row.id, cosine(vector, bytesVector(row.vector)));
    const best = top.result();
    if (best.length === 0) return [];
    const rows = await this.#query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM ${this.#t.entries} WHERE id = ANY($1::text[])`,
      [best.map((item) => item.item)],
    );
    const byId = new Map(rows.rows.map((row) => [row.id, toEntry(row)]));
    return best.flatMap(({ item, score }) => {
      const entry = byId.get(item);
      return entry ? [{ entry, score }] : [];
    });
  }

  async count(): Promise<number> {
    const result = await this.#query<{ n: string }>(`SELECT count(*) AS n FROM ${this.#t.entries}`);
    return Number(result.rows[0]?.n ?? 0);
  }

  async clear(): Promise<void> {
    const t = this.#t;
    await this.#query(
      `WITH a AS (DELETE FROM ${t.entries}), b AS (DELETE FROM ${t.actors}) DELETE FROM ${t.meta} WHERE key = 'position'`,
    );
  }

  async close(): Promise<void> {
    await this.#pool.end().catch(() => undefined);
  }

  async #query<R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(sql, params);
    } catch (error) {
      throw storageError(error, "read the memory index");
    }
  }
}

async function applyOne(
  client: pg.PoolClient,
  t: Tables,
  operation: IndexOperation,
): Promise<void> {
  if (operation.op === "actor") {
    await client.query(
      `INSERT INTO ${t.actors} (actor, continuity) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
      [operation.actor, operation.continuity],
    );
    return;
  }
  if (operation.op === "remove") {
    await client.query(
      `DELETE FROM ${t.entries} WHERE continuity = $1 AND kind = $2 AND ref = $3`,
      [operation.continuity, operation.kind, operation.ref],
    );
    return;
  }
  const { entry } = operation;
  await client.query(
    `DELETE FROM ${t.entries} WHERE id = $1 OR (continuity = $2 AND kind = $3 AND ref = $4)`,
    [entry.id, entry.continuity, entry.kind, entry.ref],
  );
  await client.query(
    `INSERT INTO ${t.entries} (id, continuity, thread, kind, ref, text, ts, seq, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      entry.id,
      entry.continuity,
      entry.thread ?? null,
      entry.kind,
      entry.ref,
      entry.text,
      entry.ts,
      entry.seq,
      entry.hash,
    ],
  );
}

/** The `AND …` of `scope`, its parameters pushed onto `params` (numbered after those there). */
function scopeSql(scope: MemoryScope, params: unknown[], actors: string): string {
  let sql = "";
  if (scope.exclude && scope.exclude.length > 0) {
    params.push([...scope.exclude]);
    sql += ` AND NOT (continuity = ANY($${params.length}::text[]))`;
  }
  if (scope.actor !== undefined) {
    params.push(scope.actor);
    sql += ` AND continuity IN (SELECT continuity FROM ${actors} WHERE actor = $${params.length})`;
  }
  return sql;
}

function toEntry(row: EntryRow): MemoryEntry {
  return {
    id: row.id,
    continuity: row.continuity,
    ...(row.thread !== null ? { thread: row.thread } : {}),
    kind: row.kind,
    ref: row.ref,
    text: row.text,
    ts: row.ts,
    seq: Number(row.seq),
    hash: row.hash,
  };
}

function storageError(error: unknown, doing: string): MemoryError {
  const message = (error as Error)?.message ?? String(error);
  // pg messages name hosts and users, never the password; strip any URL to be sure.
  const safe = message.replace(/postgres(ql)?:\/\/[^\s]*/gi, "postgres://…");
  return new MemoryError("memory.storage", `could not ${doing}: ${safe}`, {
    cause: error,
    retryable: true,
    hint: "Check that the store's PostgreSQL server is reachable; the index catches up from the log once it is",
  });
}
