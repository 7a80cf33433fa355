import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Durability } from "../src/log/index.js";
import { type EmbeddedServer, startEmbeddedPostgres } from "./embedded-postgres-server.js";
import type { Engine } from "./engine.js";
import { perSecond } from "./stats.js";
import { countEvent, RAW_COLUMNS, type ReplayState, rawParameterGroups } from "./workload.js";

/** The adapter the PostgreSQL half needs; until it exists that half is skipped. */
export const POSTGRES_ADAPTER = fileURLToPath(
  new URL("../src/log/postgres/postgres-backend.ts", import.meta.url),
);

/** Spool's events table in the default schema (see src/log/postgres/postgres-schema.ts). */
const SPOOL_EVENTS = "public.spool_events";
/** Rows per multi-row INSERT statement (and transaction) of the batched ceiling. */
const BATCH = 1_000;
/** Rows per FETCH of the raw scan's cursor. */
const SCAN_FETCH = 5_000;
const WARMUP = 50;
const RAW_DATABASE = "bench_raw";

const COLUMNS = RAW_COLUMNS.join(", ");
const PLACEHOLDERS = RAW_COLUMNS.map((_, i) => `$${i + 1}`).join(", ");
const UNNEST_TYPES = RAW_COLUMNS.map(
  (column, i) => `$${i + 1}::${column === "seq" ? "bigint" : "text"}[]`,
);

/** PostgreSQL from `embedded-postgres`, with one `pg` client per raw measure as its driver. */
export class PostgresEngine implements Engine {
  readonly kind = "postgres" as const;
  readonly notes = [
    "ceilings: one `pg` client on a table shaped like Spool's spool_events (same columns and row sizes, primary key + one index), synchronous_commit on for strict and off for fast",
    "critical ceiling: a named prepared single-row INSERT, autocommit; batched ceiling: `INSERT … SELECT * FROM unnest($1…$12)` of 1,000 rows per statement, autocommit; all row values built before the clock starts",
    `fold ceiling: a cursor over \`SELECT <all columns> FROM spool_events ORDER BY seq\` fetched ${SCAN_FETCH.toLocaleString("en-US")} rows at a time in array mode, JSON.parse of data, same counting`,
    "latency ceiling: `WITH added AS (INSERT … RETURNING seq) SELECT pg_notify(…)` on one client; the second client, on LISTEN, reads the row with `SELECT … WHERE seq > $1` when notified",
  ];
  readonly #server: EmbeddedServer;
  readonly #admin: pg.Client;
  #made = 0;

  private constructor(server: EmbeddedServer, admin: pg.Client) {
    this.#server = server;
    this.#admin = admin;
  }

  /** Starts a throwaway server (stopped again if anything after the start fails). */
  static async start(): Promise<PostgresEngine> {
    const server = await startEmbeddedPostgres();
    const admin = new pg.Client(server.url("postgres"));
    try {
      await admin.connect();
      await admin.query(`CREATE DATABASE ${RAW_DATABASE}`);
      return new PostgresEngine(server, admin);
    } catch (error) {
      await admin.end().catch(() => undefined);
      await server.stop();
      throw error;
    }
  }

  async describe(): Promise<string> {
    const { rows } = await this.#admin.query<{ v: string }>(
      "SELECT current_setting('server_version') AS v",
    );
    return `PostgreSQL ${rows[0]?.v} (embedded-postgres, default settings), pg`;
  }

  async freshLocation(label: string): Promise<string> {
    this.#made += 1;
    const name = `spool_${label.replaceAll("-", "_")}_${this.#made}`;
    await this.#admin.query(`CREATE DATABASE ${name}`);
    return this.#server.url(name);
  }

  async singleInserts(n: number, durability: Durability): Promise<number> {
    return this.#withRawTable(durability, async (client, table) => {
      const rows = rawParameterGroups(1, WARMUP + n, 1);
      const insert = (i: number) =>
        client.query({
          name: `insert_${table}`,
          text: `INSERT INTO ${table} (${COLUMNS}) VALUES (${PLACEHOLDERS})`,
          values: rows[i],
        });
      for (let i = 0; i < WARMUP; i++) await insert(i);
      const start = performance.now();
      for (let i = WARMUP; i < WARMUP + n; i++) await insert(i);
      return perSecond(n, performance.now() - start);
    });
  }

  async batchInserts(n: number, durability: Durability): Promise<number> {
    return this.#withRawTable(durability, async (client, table) => {
      // One array per column per statement, as unnest takes them.
      const statements = rawParameterGroups(1, BATCH + n, BATCH).map((values) =>
        RAW_COLUMNS.map((_, column) => values.filter((_, i) => i % RAW_COLUMNS.length === column)),
      );
      const insert = (i: number) =>
        client.query({
          name: `batch_${table}`,
          text: `INSERT INTO ${table} (${COLUMNS}) SELECT * FROM unnest(${UNNEST_TYPES.join(", ")})`,
          values: statements[i],
        });
      await insert(0);
      const start = performance.now();
      for (let i = 1; i <= n / BATCH; i++) await insert(i);
      return perSecond(n, performance.now() - start);
    });
  }

  async scan(location: string, expected: number): Promise<number> {
    const client = new pg.Client(location);
    await client.connect();
    try {
      const state: ReplayState = { events: 0, chars: 0, types: new Map() };
      const start = performance.now();
      await client.query("BEGIN");
      await client.query(
        `DECLARE scan NO SCROLL CURSOR FOR SELECT ${COLUMNS} FROM ${SPOOL_EVENTS} ORDER BY seq`,
      );
      while (true) {
        const page = await client.query<unknown[]>({
          text: `FETCH ${SCAN_FETCH} FROM scan`,
          rowMode: "array",
        });
        for (const row of page.rows)
          countEvent(state, row[5] as string, JSON.parse(row[10] as string));
        if (page.rows.length < SCAN_FETCH) break;
      }
      await client.query("COMMIT");
      const ms = performance.now() - start;
      if (state.events !== expected) throw new Error(`scan saw ${state.events} of ${expected}`);
      return perSecond(state.events, ms);
    } finally {
      await client.end();
    }
  }

  async roundTrips(n: number, durability: Durability): Promise<number[]> {
    return this.#withRawTable(durability, async (writer, table) => {
      const reader = new pg.Client(this.#server.url(RAW_DATABASE));
      await reader.connect();
      try {
        const channel = `notify_${table}`;
        const rows = rawParameterGroups(1, WARMUP + n, 1);
        let wake: (() => void) | undefined;
        reader.on("notification", () => wake?.());
        await reader.query(`LISTEN ${channel}`);
        const latencies: number[] = [];
        for (let seq = 1; seq <= WARMUP + n; seq++) {
          const start = performance.now();
          const notified = new Promise<void>((resolve) => {
            wake = resolve;
          });
          // Insert and notify commit together, as a Spool write does.
          const written = writer.query({
            name: `notify_insert_${table}`,
            text: `WITH added AS (INSERT INTO ${table} (${COLUMNS}) VALUES (${PLACEHOLDERS}) RETURNING seq)
                   SELECT pg_notify('${channel}', seq::text) FROM added`,
            values: rows[seq - 1],
          });
          await notified;
          const read = await reader.query({
            name: "read_after",
            text: `SELECT ${COLUMNS} FROM ${table} WHERE seq > $1 ORDER BY seq`,
            values: [seq - 1],
            rowMode: "array",
          });
          const ms = performance.now() - start;
          await written;
          if (read.rows.length !== 1) throw new Error(`the listener read ${read.rows.length} rows`);
          if (seq > WARMUP) latencies.push(ms);
        }
        return latencies;
      } finally {
        await reader.end();
      }
    });
  }

  async close(): Promise<void> {
    await this.#admin.end().catch(() => undefined);
    await this.#server.stop();
  }

  /**
   * Runs `work` with a client of the raw database on a new table shaped like Spool's events (its
   * primary key and one index), at the `synchronous_commit` the adapter uses for `durability`.
   */
  async #withRawTable<T>(
    durability: Durability,
    work: (client: pg.Client, table: string) => Promise<T>,
  ): Promise<T> {
    this.#made += 1;
    const table = `raw_${this.#made}`;
    const client = new pg.Client(this.#server.url(RAW_DATABASE));
    await client.connect();
    try {
      await client.query(`SET synchronous_commit = ${durability === "fast" ? "off" : "on"}`);
      await client.query(`CREATE TABLE ${table} (
        seq bigint PRIMARY KEY, id text NOT NULL, continuity text NOT NULL, stream_kind text NOT NULL,
        stream_id text NOT NULL, type text NOT NULL, ts text NOT NULL, actor text, origin text,
        criticality text NOT NULL, data text NOT NULL, hash text NOT NULL)`);
      await client.query(`CREATE INDEX ${table}_by_continuity ON ${table} (continuity, seq)`);
      return await work(client, table);
    } finally {
      await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await client.end();
    }
  }
}
