import type pg from "pg";
import { ConfigError, type PreparedEvent, type SpoolEvent, StoreError } from "../../spec/index.js";
import type { ContinuityHead, Durability, EventQuery } from "../event-store.js";
import type { LeaseAcquisition, LeaseFence, LeaseRenewal, LeaseRow } from "../lease.js";
import type { EventPage, LogBackend, WriteOptions } from "../log-backend.js";
import { PostgresArtifactStore } from "./postgres-artifacts.js";
import { checkPostgresUrl, closedError, postgresError, redactUrl } from "./postgres-errors.js";
import { PostgresEventSql } from "./postgres-events.js";
import { PostgresHeadWatch } from "./postgres-head-watch.js";
import { PostgresLeases } from "./postgres-leases.js";
import { connectionConfig, createPool, inTransaction, withClient } from "./postgres-pool.js";
import { ensurePostgresSchema, type PostgresTables, postgresTables } from "./postgres-schema.js";

/** How long a write transaction may sit idle before the server ends it and frees the head lock. */
const WRITE_IDLE_LIMIT = "60s";

/** How to open a PostgreSQL log. */
export interface PostgresBackendOptions {
  /** `postgres://user:password@host:5432/database`. The password never appears in messages or `location`. */
  url: string;
  /**
   * `strict` (default): PostgreSQL's `synchronous_commit = on` (the server's default; should a
   * server, database or role set it `off`, this store's transactions use `local`). A write resolves
   * only after its commit is flushed to the server's WAL on disk, so it survives a killed process,
   * a server crash and a power cut (given storage that honours fsync).
   *
   * `fast`: `synchronous_commit = off` for this store's transactions. A write resolves once committed
   * in the server's memory; a server crash or power cut may lose the last few hundred milliseconds
   * of acknowledged writes (up to 3 × `wal_writer_delay`), whole transactions from the end of the
   * log only: it never corrupts the log, reorders it or leaves a hole. A killed Spool process loses
   * nothing in either mode.
   */
  durability?: "strict" | "fast";
  /** Pooled connections for reads and writes (default 4); `watch` uses one more of its own. */
  poolSize?: number;
  /** The schema holding Spool's tables (default `public`); created when missing. */
  schema?: string;
}

/**
 * Opens (creating when empty) a Spool log in a PostgreSQL database, shared safely by any number
 * of processes and machines.
 *
 * Contract: seqs are gapless and commit-ordered across all writers, so a reader tailing by seq
 * never misses an event that commits late; each continuity's hash chain is linked inside the
 * writing transaction. Fails fast (5 s) with a retryable `store.unreachable` when the server
 * cannot be reached, `store.foreign-database` when the schema holds other tables, and
 * `store.schema-too-new` when a newer Spool wrote it.
 */
export async function openPostgresBackend(options: PostgresBackendOptions): Promise<LogBackend> {
  const { poolSize, schema } = checkOptions(options);
  const durability = options.durability ?? "strict";
  const pool = createPool(options.url, poolSize);
  const tables = postgresTables(schema);
  let serverDefault: string | undefined;
  try {
    serverDefault = await withClient(pool, async (client) => {
      await ensurePostgresSchema(client, schema, tables, redactUrl(options.url));
      const shown = await client.query<{ synchronous_commit: string }>("SHOW synchronous_commit");
      return shown.rows[0]?.synchronous_commit;
    });
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw postgresError(error, options.url);
  }
  // Strict needs at least a local WAL flush, also where the server, database or role turned it off.
  const commit = durability === "fast" ? "off" : serverDefault === "off" ? "local" : undefined;
  const begin = commit ? `BEGIN; SET LOCAL synchronous_commit = ${commit}` : "BEGIN";
  return new PostgresBackend(options.url, pool, tables, begin, durability);
}

function checkOptions(options: PostgresBackendOptions): { poolSize: number; schema: string } {
  checkPostgresUrl(options.url);
  const poolSize = options.poolSize ?? 4;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new ConfigError(
      "config.pool-size",
      `poolSize must be a positive integer, not ${poolSize}`,
      {
        hint: "Leave it out for the default of 4",
      },
    );
  }
  const schema = options.schema ?? "public";
  if (schema === "" || Buffer.byteLength(schema) > 63) {
    throw new ConfigError(
      "config.schema",
      `${JSON.stringify(schema)} is not a PostgreSQL schema name`,
      {
        hint: "Use a name of 1 to 63 bytes, or leave it out for public",
      },
    );
  }
  return { poolSize, schema };
}

class PostgresBackend implements LogBackend {
  readonly kind = "postgres" as const;
  readonly location: string;
  readonly durability: Durability;
  readonly artifacts: PostgresArtifactStore;
  readonly #url: string;
  readonly #pool: pg.Pool;
  readonly #sql: PostgresEventSql;
  readonly #watch: PostgresHeadWatch;
  readonly #beginWrite: string;
  readonly #leases: PostgresLeases;
  #closing: Promise<void> | undefined;

  constructor(
    url: string,
    pool: pg.Pool,
    tables: PostgresTables,
    begin: string,
    durability: Durability,
  ) {
    this.#url = url;
    this.durability = durability;
    this.location = redactUrl(url);
    this.#pool = pool;
    this.#sql = new PostgresEventSql(tables);
    // A writer that vanishes mid-transaction holds the head row lock, and with it every other
    // writer, until the server gives up on it: bound that wait (the statements of a write follow
    // each other within milliseconds).
    this.#beginWrite = `${begin}; SET LOCAL idle_in_transaction_session_timeout = '${WRITE_IDLE_LIMIT}'`;
    this.#leases = new PostgresLeases(pool, tables, begin);
    this.#watch = new PostgresHeadWatch({
      config: connectionConfig(url, "spool-listen"),
      readHead: (client) => this.#sql.head(client),
    });
    this.artifacts = new PostgresArtifactStore({
      pool,
      tables,
      begin,
      checkOpen: () => this.#checkOpen(),
      toStoreError: (error) => this.#error(error),
    });
  }

  write(
    batch: readonly PreparedEvent[],
    fences?: readonly LeaseFence[],
    options?: WriteOptions,
  ): Promise<SpoolEvent[]> {
    return this.#run(() =>
      batch.length === 0
        ? Promise.resolve([])
        : inTransaction(
            this.#pool,
            async (client, opened) => {
              // Under the head lock, before anything is inserted: a refused token writes nothing.
              if (fences && fences.length > 0) await this.#leases.checkFences(client, fences);
              return this.#sql.write(client, batch, opened.at(-1)!, options?.expectFirst);
            },
            `${this.#beginWrite}; ${this.#sql.advanceSql(batch.length)}`,
          ),
    );
  }

  acquireLease(
    continuity: string,
    holder: string,
    ttlMs: number,
    now: number,
  ): Promise<LeaseAcquisition> {
    return this.#run(() => this.#leases.acquire(continuity, holder, ttlMs, now));
  }

  renewLease(continuity: string, token: number, ttlMs: number, now: number): Promise<LeaseRenewal> {
    return this.#run(() => this.#leases.renew(continuity, token, ttlMs, now));
  }

  releaseLease(continuity: string, token: number): Promise<boolean> {
    return this.#run(() => this.#leases.release(continuity, token));
  }

  lease(continuity: string): Promise<LeaseRow | undefined> {
    return this.#run(() => this.#leases.read(continuity));
  }

  readPage(query: EventQuery, after: number, limit: number): Promise<EventPage> {
    return this.#run(() => this.#sql.readPage(this.#pool, query, after, limit));
  }

  head(): Promise<number> {
    return this.#run(() => this.#sql.head(this.#pool));
  }

  continuities(): Promise<ContinuityHead[]> {
    return this.#run(() => this.#sql.continuities(this.#pool));
  }

  continuity(id: string): Promise<ContinuityHead | undefined> {
    return this.#run(() => this.#sql.continuity(this.#pool, id));
  }

  watch(listener: (head: number) => void): () => void {
    this.#checkOpen();
    return this.#watch.add(listener);
  }

  close(): Promise<void> {
    this.#closing ??= Promise.all([
      this.#watch.close(),
      this.#pool.end().catch(() => undefined),
    ]).then(() => undefined);
    return this.#closing;
  }

  async #run<T>(work: () => Promise<T>): Promise<T> {
    this.#checkOpen();
    try {
      return await work();
    } catch (error) {
      throw this.#error(error);
    }
  }

  #checkOpen(): void {
    if (this.#closing !== undefined) throw closedError(this.location);
  }

  #error(error: unknown): StoreError {
    if (error instanceof StoreError) return error;
    // A call that raced close() fails with pg's "pool has ended": report it as closed.
    return this.#closing !== undefined
      ? closedError(this.location)
      : postgresError(error, this.#url);
  }
}
