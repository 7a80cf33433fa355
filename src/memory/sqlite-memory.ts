import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
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
import { fts5Match } from "./memory-query.js";

/** The schema version of a memory file this code reads and writes. */
const SCHEMA_VERSION = 1;

const DDL = `
CREATE TABLE IF NOT EXISTS memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_entries (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  continuity TEXT NOT NULL,
  thread TEXT,
  kind TEXT NOT NULL,
  ref TEXT NOT NULL,
  text TEXT NOT NULL,
  ts TEXT NOT NULL,
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL,
  vector_model TEXT,
  vector BLOB
);
CREATE UNIQUE INDEX IF NOT EXISTS memory_entries_by_ref ON memory_entries (continuity, kind, ref);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_text USING fts5(
  text, content='memory_entries', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TABLE IF NOT EXISTS memory_actors (
  actor TEXT NOT NULL,
  continuity TEXT NOT NULL,
  PRIMARY KEY (actor, continuity)
) WITHOUT ROWID;
`;

/** A term in more than this share of the entries is too common to rank on (when others are not). */
const COMMON_SHARE = 0.01;
/** ...and never below this many entries: in a small index every term tells. */
const COMMON_MIN = 500;
/** The most matches one search ranks by bm25: the newest ones, when a query matches more. */
const CANDIDATES = 1000;
/** Terms kept, all ANDed, when every term of a query is common. */
const COMMON_TERMS = 3;

const ENTRY_COLUMNS = "e.id, e.continuity, e.thread, e.kind, e.ref, e.text, e.ts, e.seq, e.hash";

type EntryRow = {
  id: string;
  continuity: string;
  thread: string | null;
  kind: MemoryKind;
  ref: string;
  text: string;
  ts: string;
  seq: number;
  hash: string;
};

/** Where a SQLite store's memory index lives: a file beside its database, e.g. `.spool/spool.memory.db`. */
export function sqliteMemoryFile(logFile: string): string {
  return `${logFile.replace(/\.(db|sqlite3?)$/i, "")}.memory.db`;
}

/**
 * Opens (creating when absent) the memory index in the SQLite file `file` (`":memory:"` for one
 * that lives only as long as the process). Full text by FTS5 with the porter stemmer, ranked by
 * bm25. Throws `MemoryError` `memory.storage` for a file that cannot be opened or is not a memory
 * index, `memory.schema-too-new` for one a newer Spool wrote.
 */
export function openSqliteMemory(file: string): MemoryBackend {
  let db: Database.Database | undefined;
  try {
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    db = new Database(file, { timeout: 10_000 });
    db.pragma("journal_mode = WAL");
    // Derived state: a power cut may lose the newest writes, which the next catch-up redoes.
    db.pragma("synchronous = NORMAL");
    db.exec(DDL);
    const version = db
      .prepare("SELECT value FROM memory_meta WHERE key = 'schema_version'")
      .pluck()
      .get() as string | undefined;
    if (version === undefined) {
      db.prepare("INSERT OR IGNORE INTO memory_meta (key, value) VALUES ('schema_version', ?)").run(
        String(SCHEMA_VERSION),
      );
    } else if (Number(version) > SCHEMA_VERSION) {
      throw new MemoryError(
        "memory.schema-too-new",
        `${file} is a memory index of schema version ${version}; this Spool reads version ${SCHEMA_VERSION}`,
        {
          hint: "Upgrade Spool, or delete the file: it is rebuilt from the log (`spool memory reindex`)",
        },
      );
    }
    return new SqliteMemory(db);
  } catch (error) {
    db?.close();
    if (error instanceof MemoryError) throw error;
    throw new MemoryError(
      "memory.storage",
      `cannot open the memory index ${file}: ${(error as Error).message}`,
      {
        cause: error,
        hint: "Delete the file if it is damaged: the index is rebuilt from the log (`spool memory reindex`)",
      },
    );
  }
}

class SqliteMemory implements MemoryBackend {
  readonly kind = "sqlite" as const;
  readonly #db: Database.Database;
  readonly #searches = new Map<string, Database.Statement>();
  readonly #put: (entry: MemoryEntry) => void;
  readonly #remove: (continuity: string, kind: MemoryKind, ref: string) => void;

  constructor(db: Database.Database) {
    this.#db = db;
    const byRef = db.prepare(
      "SELECT rowid, text FROM memory_entries WHERE continuity = ? AND kind = ? AND ref = ?",
    );
    const byId = db.prepare("SELECT rowid, text FROM memory_entries WHERE id = ?");
    const unText = db.prepare(
      "INSERT INTO memory_text (memory_text, rowid, text) VALUES ('delete', ?, ?)",
    );
    const deleteRow = db.prepare("DELETE FROM memory_entries WHERE rowid = ?");
    const insert = db.prepare(
      "INSERT INTO memory_entries (id, continuity, thread, kind, ref, text, ts, seq, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const insertText = db.prepare("INSERT INTO memory_text (rowid, text) VALUES (?, ?)");
    const drop = (row: { rowid: number; text: string } | undefined) => {
      if (!row) return;
      unText.run(row.rowid, row.text);
      deleteRow.run(row.rowid);
    };
    this.#remove = (continuity, kind, ref) => drop(byRef.get(continuity, kind, ref) as never);
    this.#put = (entry) => {
      drop(byId.get(entry.id) as never);
      drop(byRef.get(entry.continuity, entry.kind, entry.ref) as never);
      const { lastInsertRowid } = insert.run(
        entry.id,
        entry.continuity,
        entry.thread ?? null,
        entry.kind,
        entry.ref,
        entry.text,
        entry.ts,
        entry.seq,
        entry.hash,
      );
      insertText.run(lastInsertRowid, entry.text);
    };
  }

  async position(): Promise<number> {
    return this.#position();
  }

  #position(): number {
    const value = this.#statement("SELECT value FROM memory_meta WHERE key = 'position'")
      .pluck()
      .get();
    return value === undefined ? 0 : Number(value);
  }

  async apply(
    operations: readonly { seq: number; operation: IndexOperation }[],
    position: number,
  ): Promise<void> {
    const addActor = this.#db.prepare(
      "INSERT OR IGNORE INTO memory_actors (actor, continuity) VALUES (?, ?)",
    );
    const setPosition = this.#db.prepare(
      "INSERT INTO memory_meta (key, value) VALUES ('position', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    this.#db
      .transaction(() => {
        const stored = this.#position();
        for (const { seq, operation } of operations) {
          if (seq <= stored) continue;
          if (operation.op === "put") this.#put(operation.entry);
          else if (operation.op === "remove")
            this.#remove(operation.continuity, operation.kind, operation.ref);
          else addActor.run(operation.actor, operation.continuity);
        }
        if (position > stored) setPosition.run(String(position));
      })
      .immediate();
  }

  async search(
    terms: readonly string[],
    scope: MemoryScope,
    limit: number,
  ): Promise<ScoredEntry[]> {
    if (terms.length === 0 || limit <= 0) return [];
    const { telling, common } = this.#tellingTerms(terms);
    if (telling.length === 0) return [];
    // Every telling term first (AND: few rows, the most relevant); any of them (OR) only when
    // that finds too few, and never for common terms alone (each matches much of the index).
    if (telling.length > 1 || common) {
      const all = this.#ranked(fts5Match(telling, "AND"), scope, limit);
      if (all.length >= limit || common) return all;
    }
    return this.#ranked(fts5Match(telling, "OR"), scope, limit);
  }

  /**
   * The terms worth ranking on: those that match something, without the ones common enough to
   * tell nothing (in more than COMMON_SHARE of the entries); when every term is common, the first
   * COMMON_TERMS of them, to be ANDed (`common`). Document
   * frequencies are counted in the full-text index, each up to the common threshold.
   */
  #tellingTerms(terms: readonly string[]): { telling: string[]; common: boolean } {
    const size = (this.#statement("SELECT max(rowid) FROM memory_entries").pluck().get() ??
      0) as number;
    const common = Math.max(COMMON_MIN, Math.ceil(size * COMMON_SHARE));
    const df = this.#statement(
      "SELECT count(*) FROM (SELECT 1 FROM memory_text WHERE memory_text MATCH ? LIMIT ?)",
    ).pluck();
    const found = terms
      .map((term) => ({ term, df: df.get(fts5Match([term], "OR"), common) as number }))
      .filter(({ df }) => df > 0);
    const rare = found.filter(({ df }) => df < common);
    if (rare.length > 0 || found.length === 0)
      return { telling: rare.map(({ term }) => term), common: false };
    return { telling: found.slice(0, COMMON_TERMS).map(({ term }) => term), common: true };
  }

  /**
   * The best `limit` entries within `scope` for an FTS5 `match`, by bm25. The ranking runs on the
   * full-text index alone (`ORDER BY rank LIMIT`), over the newest CANDIDATES matches at most, and
   * the scope filters its best rows: fetched wider and wider until the scope leaves enough or the
   * candidates run out.
   */
  #ranked(match: string, scope: MemoryScope, limit: number): ScoredEntry[] {
    const floor = (this.#statement(
      "SELECT rowid FROM memory_text WHERE memory_text MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
    )
      .pluck()
      .get(match, CANDIDATES - 1) ?? 0) as number;
    const { sql, params } = scoped(
      `SELECT ${ENTRY_COLUMNS}, m.score AS score FROM (SELECT rowid, rank AS score FROM memory_text WHERE memory_text MATCH ? AND rowid >= ? ORDER BY rank LIMIT ?) AS m JOIN memory_entries e ON e.rowid = m.rowid WHERE 1`,
      scope,
    );
    const statement = this.#statement(`${sql} ORDER BY m.score LIMIT ?`);
    for (let fetch = Math.max(limit * 8, 64); ; fetch *= 8) {
      const rows = statement.all(match, floor, fetch, ...params, limit) as (EntryRow & {
        score: number;
      })[];
      if (rows.length >= limit || fetch >= CANDIDATES)
        return rows.map((row) => ({ entry: toEntry(row), score: -row.score }));
      const total = this.#statement(
        "SELECT count(*) FROM (SELECT rowid FROM memory_text WHERE memory_text MATCH ? AND rowid >= ? LIMIT ?)",
      )
        .pluck()
        .get(match, floor, fetch) as number;
      if (total < fetch) return rows.map((row) => ({ entry: toEntry(row), score: -row.score }));
    }
  }

  async unembedded(model: string, limit: number): Promise<MemoryEntry[]> {
    const rows = this.#statement(
      `SELECT ${ENTRY_COLUMNS} FROM memory_entries e WHERE e.vector_model IS NULL OR e.vector_model <> ? ORDER BY e.seq LIMIT ?`,
    ).all(model, limit) as EntryRow[];
    return rows.map(toEntry);
  }

  async storeVectors(
    model: string,
    vectors: readonly { id: string; vector: Float32Array }[],
  ): Promise<void> {
    const update = this.#statement(
      "UPDATE memory_entries SET vector_model = ?, vector = ? WHERE id = ?",
    );
    this.#db.transaction(() => {
      for (const { id, vector } of vectors) update.run(model, vectorBytes(vector), id);
    })();
  }

  async nearest(
    model: string,
    vector: Float32Array,
    scope: MemoryScope,
    limit: number,
  ): Promise<ScoredEntry[]> {
    if (limit <= 0) return [];
    const { sql, params } = scoped(
      "SELECT e.rowid AS rowid, e.vector AS vector FROM memory_entries e WHERE e.vector_model = ?",
      scope,
    );
    const top = new TopK<number>(limit);
    for (const row of this.#statement(sql).iterate(model, ...params) as Iterable<{
      rowid: number;
      vector: Buffer;
    }>) {
      top.offer(row.rowid, cosine(vector, bytesVector(row.vector)));
    }
    const byRow = this.#statement(
      `SELECT ${ENTRY_COLUMNS} FROM memory_entries e WHERE e.rowid = ?`,
    );
    return top
      .result()
      .map(({ item, score }) => ({ entry: toEntry(byRow.get(item) as EntryRow), score }));
  }

  async count(): Promise<number> {
    return this.#db.prepare("SELECT count(*) FROM memory_entries").pluck().get() as number;
  }

  async clear(): Promise<void> {
    this.#db
      .transaction(() => {
        this.#db.exec(
          "DELETE FROM memory_entries; INSERT INTO memory_text (memory_text) VALUES ('delete-all'); DELETE FROM memory_actors; DELETE FROM memory_meta WHERE key = 'position';",
        );
      })
      .immediate();
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  #statement(sql: string): Database.Statement {
    let statement = this.#searches.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#searches.set(sql, statement);
    }
    return statement;
  }
}

/** `sql` narrowed to `scope`: the SQL and its parameters after the ones `sql` already has. */
function scoped(sql: string, scope: MemoryScope): { sql: string; params: string[] } {
  const params: string[] = [];
  let text = sql;
  const exclude = scope.exclude ?? [];
  if (exclude.length > 0) {
    text += ` AND e.continuity NOT IN (${exclude.map(() => "?").join(", ")})`;
    params.push(...exclude);
  }
  if (scope.actor !== undefined) {
    text += " AND e.continuity IN (SELECT continuity FROM memory_actors WHERE actor = ?)";
    params.push(scope.actor);
  }
  return { sql: text, params };
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
