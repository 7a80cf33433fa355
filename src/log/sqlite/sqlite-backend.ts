import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type Database from "better-sqlite3";
import { type PreparedEvent, type SpoolEvent, StoreError } from "../../spec/index.js";
import type { ContinuityHead, Durability, EventQuery } from "../event-store.js";
import {
  decideAcquire,
  decideRelease,
  decideRenew,
  type LeaseAcquisition,
  type LeaseFence,
  type LeaseRenewal,
  type LeaseRow,
} from "../lease.js";
import type { EventPage, LogBackend, WriteOptions } from "../log-backend.js";
import { checkStreamKind } from "../stream-kind.js";
import { FileArtifactStore } from "./file-artifacts.js";
import { ForeignCommitWatch } from "./foreign-commit-watch.js";
import { sqliteError } from "./sqlite-errors.js";
import { openSqliteDatabase } from "./sqlite-open.js";
import { ensureSqliteSchema } from "./sqlite-schema.js";
import { COLUMNS, HEAD_COLUMNS } from "./sqlite-write.js";
import { SqliteWriter } from "./sqlite-writer.js";
import { WalCheckpointer, type WalCheckpointOptions } from "./wal-checkpointer.js";

/** Options of the SQLite adapter. */
export interface SqliteBackendOptions {
  /** A directory (holding `spool.db` and `artifacts/`) or a `.db`/`.sqlite` file path. */
  path: string;
  durability?: Durability;
  /**
   * How often to look for commits made by other processes while someone subscribes, beside the
   * file watch that usually notices them at once (default 100 ms).
   */
  pollIntervalMs?: number;
  /** How long a writer waits for another process's write lock (default 10 s). */
  busyTimeoutMs?: number;
  /** When the WAL is checkpointed (default: after 200 ms without writes, or 50,000 events). */
  checkpoint?: Partial<WalCheckpointOptions>;
  /**
   * Writes of at least this many events go to a writer thread with its own connection, started
   * on the first such write (default 256); `0` sends every write there, `Infinity` none.
   */
  threadMinEvents?: number;
}

/** Where a SQLite store keeps its database file and its artifacts. */
export function sqlitePaths(path: string): { file: string; artifacts: string } {
  const absolute = resolve(path);
  const isFile = /\.(db|sqlite3?)$/i.test(absolute);
  let isDirectory = false;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    // absent: decided by the name
  }
  if (isFile && !isDirectory)
    return { file: absolute, artifacts: join(dirname(absolute), "artifacts") };
  return { file: join(absolute, "spool.db"), artifacts: join(absolute, "artifacts") };
}

type Row = [
  number,
  string,
  string,
  string,
  string,
  string,
  string,
  string | null,
  string | null,
  string,
  string,
  string,
];
type HeadRow = [string, number, number, number, string, string, string];
type LeaseRecord = LeaseRow | undefined;

/**
 * Opens (creating when absent) a SQLite log; read-only when this user can read it but not write
 * it (see `openSqliteDatabase`), where every write fails with `store.read-only`. Throws
 * `StoreError` for a location that cannot be a store, a file that is not one, or a damaged one.
 */
export function openSqliteBackend(options: SqliteBackendOptions): LogBackend {
  const { file, artifacts } = sqlitePaths(options.path);
  let db: Database.Database | undefined;
  try {
    const opened = openSqliteDatabase(file, options.busyTimeoutMs ?? 10_000);
    db = opened.db;
    if (!opened.readOnly) {
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${options.durability === "fast" ? "NORMAL" : "FULL"}`);
      // Checkpoints run when the store is idle (see WalCheckpointer), not inside a commit.
      db.pragma("wal_autocheckpoint = 0");
    }
    ensureSqliteSchema(db, file, opened.readOnly);
    return new SqliteBackend(db, file, artifacts, { ...options, readOnly: opened.readOnly });
  } catch (error) {
    db?.close();
    throw sqliteError(error, file);
  }
}

class SqliteBackend implements LogBackend {
  readonly kind = "sqlite" as const;
  readonly location: string;
  readonly durability: Durability;
  readonly artifacts: FileArtifactStore;
  readonly #db: Database.Database;
  /** Writes may be in flight two at a time: the writer keeps them in order (see SqliteWriter). */
  readonly maxWritesInFlight = 2;
  readonly #reads = new Map<string, Database.Statement>();
  readonly #writer: SqliteWriter;
  readonly #allHeads: Database.Statement<[], HeadRow>;
  readonly #oneHead: Database.Statement<[string], HeadRow>;
  readonly #maxSeq: Database.Statement<[], number | null>;
  readonly #leaseOf: Database.Statement<[string], LeaseRecord>;
  readonly #putLease: Database.Statement<[string, number, string | null, number]>;
  readonly #listeners = new Set<(head: number) => void>();
  readonly #foreignCommits: ForeignCommitWatch;
  readonly #checkpointer: WalCheckpointer;
  #dataVersion = 0;

  constructor(
    db: Database.Database,
    file: string,
    artifactDir: string,
    options: SqliteBackendOptions & { readOnly: boolean },
  ) {
    this.#db = db;
    this.location = file;
    this.durability = options.durability ?? "strict";
    this.#foreignCommits = new ForeignCommitWatch(
      file,
      () => this.#checkForeignCommits(),
      options.pollIntervalMs ?? 100,
    );
    this.#writer = new SqliteWriter(db, {
      file,
      synchronous: options.durability === "fast" ? "NORMAL" : "FULL",
      busyTimeoutMs: options.busyTimeoutMs ?? 10_000,
      threadMinEvents: options.threadMinEvents,
    });
    this.#checkpointer = new WalCheckpointer(
      () => {
        try {
          // Under load (the writer thread runs) on a checkpoint thread, off this one.
          if (this.#writer.threaded) this.#writer.checkpointInThread();
          else if (db.open) db.pragma("wal_checkpoint(PASSIVE)");
        } catch {
          // A busy or broken database is retried at the next idle moment, or surfaces on use.
        }
      },
      { idleMs: 200, maxEvents: 50_000, ...options.checkpoint },
    );
    this.artifacts = new FileArtifactStore(db, artifactDir, {
      sync: options.durability !== "fast",
      readOnly: options.readOnly,
    });
    this.#allHeads = db
      .prepare(`SELECT ${HEAD_COLUMNS} FROM continuities ORDER BY first_seq`)
      .raw(true) as Database.Statement<[], HeadRow>;
    this.#oneHead = db
      .prepare(`SELECT ${HEAD_COLUMNS} FROM continuities WHERE continuity = ?`)
      .raw(true) as Database.Statement<[string], HeadRow>;
    this.#maxSeq = db.prepare("SELECT max(seq) FROM events").pluck() as Database.Statement<
      [],
      number | null
    >;
    this.#leaseOf = db.prepare(
      "SELECT token, holder, expires_at AS expiresAt FROM leases WHERE continuity = ?",
    ) as Database.Statement<[string], LeaseRecord>;
    this.#putLease = db.prepare(
      `INSERT INTO leases (continuity, token, holder, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (continuity) DO UPDATE SET token = excluded.token, holder = excluded.holder,
         expires_at = excluded.expires_at`,
    );
  }

  async write(
    batch: readonly PreparedEvent[],
    fences?: readonly LeaseFence[],
    options?: WriteOptions,
  ): Promise<SpoolEvent[]> {
    this.#checkOpen();
    let stored: SpoolEvent[];
    try {
      stored = await this.#writer.write(batch, fences, options);
    } catch (error) {
      throw sqliteError(error, this.location);
    }
    this.#checkpointer.wrote(stored.length);
    return stored;
  }

  async acquireLease(
    continuity: string,
    holder: string,
    ttlMs: number,
    now: number,
  ): Promise<LeaseAcquisition> {
    return this.#leaseTransaction(continuity, (row) =>
      decideAcquire(continuity, row, holder, ttlMs, now),
    );
  }

  async renewLease(
    continuity: string,
    token: number,
    ttlMs: number,
    now: number,
  ): Promise<LeaseRenewal> {
    return this.#leaseTransaction(continuity, (row) =>
      decideRenew(continuity, row, token, ttlMs, now),
    );
  }

  async releaseLease(continuity: string, token: number): Promise<boolean> {
    return this.#leaseTransaction(continuity, (row) => decideRelease(row, token));
  }

  async lease(continuity: string): Promise<LeaseRow | undefined> {
    return this.#guard(() => this.#leaseOf.get(continuity));
  }

  /**
   * Reads a lease row and writes what `decide` makes of it in one `BEGIN IMMEDIATE` transaction:
   * the database's write lock orders it with every other process's lease requests and appends.
   */
  #leaseTransaction<T>(
    continuity: string,
    decide: (row: LeaseRow | undefined) => { result: T; write?: LeaseRow },
  ): T {
    return this.#guard(() =>
      this.#db
        .transaction(() => {
          const decision = decide(this.#leaseOf.get(continuity));
          const row = decision.write;
          if (row) this.#putLease.run(continuity, row.token, row.holder, row.expiresAt);
          return decision.result;
        })
        .immediate(),
    );
  }

  async readPage(query: EventQuery, after: number, limit: number): Promise<EventPage> {
    return this.#guard(() => {
      const head = this.#maxSeq.get() ?? 0;
      const until = Math.min(query.until ?? head, head);
      if (after >= until) return { events: [], head };
      const { sql, params } = readSql(query);
      let statement = this.#reads.get(sql);
      if (!statement) {
        statement = this.#db.prepare(sql).raw(true);
        this.#reads.set(sql, statement);
      }
      const rows = statement.all(...params, after, until, limit) as Row[];
      let chars = 0;
      for (const row of rows) chars += row[10].length;
      return { events: rows.map(toEvent), head, chars };
    });
  }

  async head(): Promise<number> {
    return this.headNow();
  }

  headNow(): number {
    return this.#guard(() => this.#maxSeq.get() ?? 0);
  }

  async continuities(): Promise<ContinuityHead[]> {
    return this.#guard(() => {
      return this.#allHeads.all().map(toHead);
    });
  }

  async continuity(id: string): Promise<ContinuityHead | undefined> {
    return this.#guard(() => {
      const row = this.#oneHead.get(id);
      return row ? toHead(row) : undefined;
    });
  }

  watch(listener: (head: number) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#foreignCommits.running) {
      this.#dataVersion = this.#guard(
        () => this.#db.pragma("data_version", { simple: true }) as number,
      );
      this.#foreignCommits.start();
    }
    listener(this.#guard(() => this.#maxSeq.get() ?? 0));
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#foreignCommits.stop();
    };
  }

  #checkForeignCommits(): void {
    if (!this.#db.open) return;
    let head: number;
    try {
      // data_version changes only when another connection commits.
      const version = this.#db.pragma("data_version", { simple: true }) as number;
      if (version === this.#dataVersion) return;
      this.#dataVersion = version;
      head = this.#maxSeq.get() ?? 0;
    } catch {
      // A timer must not throw; a broken database surfaces on the subscriber's next read.
      return;
    }
    for (const listener of this.#listeners) listener(head);
  }

  async close(): Promise<void> {
    this.#checkpointer.stop();
    this.#foreignCommits.stop();
    this.#listeners.clear();
    await this.#writer.close();
    if (this.#db.open) this.#db.close();
  }

  #checkOpen(): void {
    if (!this.#db.open) {
      throw new StoreError("store.closed", "the event store is closed", {
        hint: "Open the store again",
      });
    }
  }

  /** Runs one database call, turning every SQLite failure into a `StoreError` that says what to do. */
  #guard<T>(call: () => T): T {
    this.#checkOpen();
    try {
      return call();
    } catch (error) {
      throw sqliteError(error, this.location);
    }
  }
}

function readSql(query: EventQuery): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.continuity !== undefined) {
    where.push("continuity = ?");
    params.push(query.continuity);
  }
  if (query.stream?.kind === "continuity") {
    // A continuity's own stream is served by the continuity index (its id is the continuity's).
    where.push("continuity = ? AND stream_kind = 'continuity'");
    params.push(query.stream.id);
  } else if (query.stream) {
    // The literal kind lets the planner use the partial stream index; kinds are a closed set.
    where.push(`stream_kind = '${checkStreamKind(query.stream.kind)}' AND stream_id = ?`);
    params.push(query.stream.id);
  }
  if (query.types) {
    // An empty list of types matches nothing, as on PostgreSQL (`type = ANY('{}')`).
    where.push(query.types.length > 0 ? `type IN (${query.types.map(() => "?").join(", ")})` : "0");
    params.push(...query.types);
  }
  where.push("seq > ? AND seq <= ?");
  return {
    sql: `SELECT ${COLUMNS} FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`,
    params,
  };
}

function toEvent(row: Row): SpoolEvent {
  return {
    seq: row[0],
    id: row[1],
    continuity: row[2],
    stream: { kind: row[3] as SpoolEvent["stream"]["kind"], id: row[4] },
    type: row[5],
    ts: row[6],
    actor: row[7],
    origin: row[8],
    criticality: row[9] as SpoolEvent["criticality"],
    data: JSON.parse(row[10]),
    hash: row[11],
  };
}

function toHead(row: HeadRow): ContinuityHead {
  return {
    continuity: row[0],
    events: row[1],
    firstSeq: row[2],
    lastSeq: row[3],
    createdAt: row[4],
    lastAt: row[5],
    headHash: row[6],
  };
}
