import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type Durability, sqlitePaths } from "../src/log/index.js";
import type { Engine } from "./engine.js";
import { perSecond } from "./stats.js";
import { countEvent, RAW_COLUMNS, type ReplayState, rawParameterGroups } from "./workload.js";

/** Rows per transaction of the batched ceiling (`n` must be a multiple). */
const BATCH = 1_000;
/** Rows per multi-row INSERT statement (BATCH / ROWS_PER_STATEMENT statements per transaction). */
const ROWS_PER_STATEMENT = 100;
const WARMUP = 50;

const COLUMNS = RAW_COLUMNS.join(", ");
/** Spool's events table with its primary key and one index (the ceiling's table). */
const RAW_TABLE = `
CREATE TABLE events (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL, continuity TEXT NOT NULL, stream_kind TEXT NOT NULL,
  stream_id TEXT NOT NULL, type TEXT NOT NULL, ts TEXT NOT NULL, actor TEXT, origin TEXT,
  criticality TEXT NOT NULL, data TEXT NOT NULL, hash TEXT NOT NULL
);
CREATE INDEX events_by_continuity ON events (continuity, seq);`;

/** SQLite in a temporary directory, with better-sqlite3 as its raw driver. */
export class SqliteEngine implements Engine {
  readonly kind = "sqlite" as const;
  readonly notes = [
    "ceilings: better-sqlite3 on a table shaped like Spool's events (same columns and row sizes, primary key + one index; Spool has two indexes and a continuities upsert), synchronous FULL for strict and NORMAL for fast",
    "critical ceiling: one prepared single-row INSERT per transaction; batched ceiling: 1,000 rows per transaction as 10 prepared 100-row INSERTs; all row values built before the clock starts",
    "fold ceiling: `.raw().iterate()` over `SELECT <all columns> FROM events ORDER BY seq` on Spool's own file, JSON.parse of data, same counting",
    "latency ceiling: INSERT on one connection, then a tight loop of `SELECT … WHERE seq > ?` on a second connection until the row is seen",
  ];
  readonly #root = mkdtempSync(join(tmpdir(), "spool-bench-sqlite-"));
  #made = 0;

  async describe(): Promise<string> {
    const db = new Database(":memory:");
    try {
      return `SQLite ${db.prepare("SELECT sqlite_version()").pluck().get()} (WAL), better-sqlite3`;
    } finally {
      db.close();
    }
  }

  async freshLocation(label: string): Promise<string> {
    this.#made += 1;
    return join(this.#root, `${label}-${this.#made}`);
  }

  async singleInserts(n: number, durability: Durability): Promise<number> {
    return this.#withRawDb(durability, (db) => {
      const insert = db.prepare(`INSERT INTO events (${COLUMNS}) VALUES (${marks(1)})`);
      const rows = rawParameterGroups(1, WARMUP + n, 1);
      for (let i = 0; i < WARMUP; i++) insert.run(rows[i]);
      const start = performance.now();
      for (let i = WARMUP; i < WARMUP + n; i++) insert.run(rows[i]);
      return perSecond(n, performance.now() - start);
    });
  }

  async batchInserts(n: number, durability: Durability): Promise<number> {
    return this.#withRawDb(durability, (db) => {
      const insert = db.prepare(
        `INSERT INTO events (${COLUMNS}) VALUES ${marks(ROWS_PER_STATEMENT)}`,
      );
      const statements = rawParameterGroups(1, BATCH + n, ROWS_PER_STATEMENT);
      const perBatch = BATCH / ROWS_PER_STATEMENT;
      const write = db.transaction((batch: number) => {
        for (let i = batch * perBatch; i < (batch + 1) * perBatch; i++) insert.run(statements[i]);
      });
      write.immediate(0);
      const start = performance.now();
      for (let batch = 1; batch <= n / BATCH; batch++) write.immediate(batch);
      return perSecond(n, performance.now() - start);
    });
  }

  async scan(location: string, expected: number): Promise<number> {
    const db = new Database(sqlitePaths(location).file, { readonly: true });
    try {
      const rows = db.prepare(`SELECT ${COLUMNS} FROM events ORDER BY seq`).raw(true);
      const state: ReplayState = { events: 0, chars: 0, types: new Map() };
      const start = performance.now();
      for (const row of rows.iterate() as IterableIterator<unknown[]>) {
        countEvent(state, row[5] as string, JSON.parse(row[10] as string));
      }
      const ms = performance.now() - start;
      if (state.events !== expected) throw new Error(`scan saw ${state.events} of ${expected}`);
      return perSecond(state.events, ms);
    } finally {
      db.close();
    }
  }

  async roundTrips(n: number, durability: Durability): Promise<number[]> {
    return this.#withRawDb(durability, (writer, file) => {
      const reader = new Database(file, { readonly: true });
      try {
        const insert = writer.prepare(`INSERT INTO events (${COLUMNS}) VALUES (${marks(1)})`);
        const poll = reader.prepare(`SELECT ${COLUMNS} FROM events WHERE seq > ?`).raw(true);
        const rows = rawParameterGroups(1, WARMUP + n, 1);
        const latencies: number[] = [];
        for (let seq = 1; seq <= WARMUP + n; seq++) {
          const start = performance.now();
          insert.run(rows[seq - 1]);
          // The reader polls in a tight loop until the committed row is visible on its connection.
          while (poll.all(seq - 1).length === 0);
          if (seq > WARMUP) latencies.push(performance.now() - start);
        }
        return latencies;
      } finally {
        reader.close();
      }
    });
  }

  async close(): Promise<void> {
    rmSync(this.#root, { recursive: true, force: true });
  }

  /** Runs `work` on a new database holding the raw table, at the sync level of `durability`. */
  #withRawDb<T>(durability: Durability, work: (db: Database.Database, file: string) => T): T {
    this.#made += 1;
    const file = join(this.#root, `raw-${this.#made}.db`);
    const db = new Database(file);
    try {
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${durability === "fast" ? "NORMAL" : "FULL"}`);
      db.exec(RAW_TABLE);
      return work(db, file);
    } finally {
      db.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    }
  }
}

/** `(?, …, ?)` placeholders for `rows` rows of the raw table. */
function marks(rows: number): string {
  const row = RAW_COLUMNS.map(() => "?").join(", ");
  return rows === 1 ? row : Array.from({ length: rows }, () => `(${row})`).join(", ");
}
