import type Database from "better-sqlite3";
import { chainHash, GENESIS_HASH, type PreparedEvent } from "../../spec/index.js";
import { toPending } from "../log-backend.js";

/** Values per event in a flat row batch: what `rowValues` writes and `SqliteChainWriter.add` reads. */
export const ROW_WIDTH = 11;

/** Rows per multi-row INSERT (12 parameters each, within SQLite's 32,766-parameter limit). */
const INSERT_ROWS = 100;
/** The `events` columns, in insert order. */
export const COLUMNS =
  "seq, id, continuity, stream_kind, stream_id, type, ts, actor, origin, criticality, data, hash";
/** The `continuities` columns, in insert order. */
export const HEAD_COLUMNS =
  "continuity, events, first_seq, last_seq, created_at, last_at, head_hash";

/** A continuity's chain head while a transaction links events onto it. */
interface ChainHead {
  hash: string;
  added: number;
  first: number;
  last: number;
  firstAt: string;
  lastAt: string;
}

/** What a committed write assigned: the first seq (the rest follow) and each event's hash. */
export interface WrittenRows {
  first: number;
  hashes: string[];
}

/**
 * Appends `events` to `out` as flat rows of `ROW_WIDTH` values (envelope, data JSON, canonical
 * form): the transferable shape both the in-thread writer and the writer thread take.
 */
export function rowValues(events: readonly PreparedEvent[], out: unknown[] = []): unknown[] {
  for (const prepared of events) {
    const { event, dataJson, canonical } = toPending(prepared);
    out.push(
      event.id,
      event.continuity,
      event.stream.kind,
      event.stream.id,
      event.type,
      event.ts,
      event.actor,
      event.origin,
      event.criticality,
      dataJson,
      canonical,
    );
  }
  return out;
}

/**
 * Writes events into Spool's SQLite tables on one connection, in one immediate transaction:
 * `begin`, any number of `add`s, then `commit` (or `rollback`). Seqs continue from `max(seq)`
 * read under the write lock, so they are gapless and in commit order across processes; each
 * continuity's chain continues from its committed head. Used on the store's own connection for
 * small batches and inside the writer thread for large ones, so both write identical rows.
 */
export class SqliteChainWriter {
  readonly #db: Database.Database;
  readonly #insertOne: Database.Statement;
  readonly #insertMany: Database.Statement;
  readonly #headOf: Database.Statement<[string], string>;
  readonly #upsertHead: Database.Statement;
  readonly #maxSeq: Database.Statement<[], number | null>;
  #seq = 0;
  #first = 0;
  #heads = new Map<string, ChainHead>();
  #hashes: string[] = [];
  #values: unknown[] = [];

  constructor(db: Database.Database) {
    this.#db = db;
    const rows = (count: number) =>
      Array(count).fill("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
    this.#insertOne = db.prepare(`INSERT INTO events (${COLUMNS}) VALUES ${rows(1)}`);
    this.#insertMany = db.prepare(`INSERT INTO events (${COLUMNS}) VALUES ${rows(INSERT_ROWS)}`);
    this.#headOf = db
      .prepare("SELECT head_hash FROM continuities WHERE continuity = ?")
      .pluck() as Database.Statement<[string], string>;
    this.#upsertHead = db.prepare(
      `INSERT INTO continuities (${HEAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (continuity) DO UPDATE SET events = events + excluded.events, last_seq = excluded.last_seq,
         last_at = excluded.last_at, head_hash = excluded.head_hash`,
    );
    this.#maxSeq = db.prepare("SELECT max(seq) FROM events").pluck() as Database.Statement<
      [],
      number | null
    >;
  }

  /** Takes the write lock (waiting up to the busy timeout) and reads where seqs continue. */
  begin(): void {
    this.#db.exec("BEGIN IMMEDIATE");
    this.#seq = this.#maxSeq.get() ?? 0;
    this.#first = this.#seq + 1;
    this.#heads = new Map();
    this.#hashes = [];
    this.#values = [];
  }

  /** Positions, links and inserts flat rows (see `rowValues`). */
  add(rows: readonly unknown[]): void {
    const values = this.#values;
    for (let at = 0; at < rows.length; at += ROW_WIDTH) {
      const continuity = rows[at + 1] as string;
      const ts = rows[at + 5] as string;
      const seq = ++this.#seq;
      let head = this.#heads.get(continuity);
      if (!head) {
        head = {
          hash: this.#headOf.get(continuity) ?? GENESIS_HASH,
          added: 0,
          first: seq,
          last: seq,
          firstAt: ts,
          lastAt: ts,
        };
        this.#heads.set(continuity, head);
      }
      const hash = chainHash(head.hash, rows[at + 10] as string);
      head.hash = hash;
      head.added += 1;
      head.last = seq;
      head.lastAt = ts;
      this.#hashes.push(hash);
      values.push(seq);
      for (let k = 0; k < 10; k++) values.push(rows[at + k]);
      values.push(hash);
      if (values.length === INSERT_ROWS * 12) {
        this.#insertMany.run(values);
        values.length = 0;
      }
    }
  }

  /** Inserts what is left, moves the continuity heads, and commits. */
  commit(): WrittenRows {
    const values = this.#values;
    for (let offset = 0; offset < values.length; offset += 12)
      this.#insertOne.run(values.slice(offset, offset + 12));
    values.length = 0;
    for (const [continuity, head] of this.#heads) {
      this.#upsertHead.run(
        continuity,
        head.added,
        head.first,
        head.last,
        head.firstAt,
        head.lastAt,
        head.hash,
      );
    }
    this.#db.exec("COMMIT");
    return { first: this.#first, hashes: this.#hashes };
  }

  /** Abandons the transaction, if one is open; never throws. */
  rollback(): void {
    this.#values = [];
    try {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
    } catch {
      // The connection is closing or broken; SQLite rolls back on close.
    }
  }
}
