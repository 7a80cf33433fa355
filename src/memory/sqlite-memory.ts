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
import { MemoryError, REINDEX_HINT } from "./memory-error.js";
import { scoped, searchRows } from "./sqlite-search.js";

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

/** Bytes of the file mapped into memory for reading. */
const MMAP_BYTES = 256 * 2 ** 20;
/** KiB of pages the connection caches. */
const CACHE_KIB = 32 * 1024;

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
    // Searches read postings all over the file: map it, and keep more of it cached than the
    // default 2 MiB (both are bounds, not allocations).
    db.pragma(`mmap_size = ${MMAP_BYTES}`);
    db.pragma(`cache_size = -${CACHE_KIB}`);
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
        hint: REINDEX_HINT,
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
    const rows = searchRows((sql) => this.#statement(sql), terms, scope, limit);
    const byRow = this.#statement(
      `SELECT ${ENTRY_COLUMNS} FROM memory_entries e WHERE e.rowid = ?`,
    );
    return rows.map(({ rowid, score }) => ({
      entry: toEntry(byRow.get(rowid) as EntryRow),
      score,
    }));
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

  async compact(): Promise<void> {
    // One segment instead of many: each term is looked up once per search, not once per segment.
    this.#db.prepare("INSERT INTO memory_text (memory_text) VALUES ('optimize')").run();
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
