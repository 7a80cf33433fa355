import { accessSync, closeSync, constants, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { StoreError } from "../../spec/index.js";

// A store that can be read but not written, with no `-wal`/`-shm` beside it, opens only as an
// immutable URI (see `openSqliteDatabase`). better-sqlite3 reads this once, when its native addon
// loads on the first `new Database`; every file this module opens is an absolute path, whose
// meaning URIs do not change. A value the user set is kept.
process.env.SQLITE_USE_URI ??= "1";

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = "SQLite format 3\0";

const HINT = "Point --db (or SPOOL_DB) at a directory, a .db file or a postgres:// URL";

/**
 * Checks, without creating or changing anything, that `file` (a store's database file, as
 * `sqlitePaths` names it) can be a Spool store: no folder above it is a file (`/etc/passwd/spool.db`,
 * or `SPOOL_DB` naming a text file, whose `spool.db` would sit inside it), and a file already
 * there is a SQLite database (an empty one becomes a new store). Throws `StoreError`
 * `store.bad-location` or `store.not-a-database`, naming the path and how to fix it.
 */
export function checkSqliteLocation(file: string): void {
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    const kind = kindOf(folder);
    if (kind === "directory") break;
    if (kind === "other") {
      throw new StoreError(
        "store.bad-location",
        `${folder} is a file, not a directory, so ${file} cannot be a Spool store`,
        { hint: HINT },
      );
    }
    if (dirname(folder) === folder) break;
  }
  const kind = kindOf(file);
  if (kind === "directory") {
    throw new StoreError("store.bad-location", `${file} is a directory, not a database file`, {
      hint: HINT,
    });
  }
  if (kind === "other" && !hasSqliteHeader(file)) {
    throw new StoreError(
      "store.not-a-database",
      `${file} is not a Spool store: it is not a SQLite database`,
      {
        hint: `${HINT}; this file was left untouched`,
      },
    );
  }
}

/** A database connection and whether it can only read. */
export interface OpenedDatabase {
  db: Database.Database;
  /** True when this user may read the store but not write it (file or folder not writable). */
  readOnly: boolean;
}

/**
 * Opens `file` read-write, creating it (and its folder) when absent; or, when it exists and this
 * user cannot write it or its folder, read-only, so the commands that only read (`spool
 * continuities`, `spool log show`, `spool log verify`) still work and a write fails with
 * `store.read-only`. A read-only store in WAL mode with no `-shm` beside it (closed cleanly)
 * cannot be opened by SQLite's usual read-only path; it is opened as immutable, which is safe
 * because no one who can write that folder is writing it then (a writer keeps `-shm` there).
 * Throws what better-sqlite3 throws, for `sqliteError` to explain.
 */
export function openSqliteDatabase(file: string, timeout: number): OpenedDatabase {
  checkSqliteLocation(file);
  if (kindOf(file) === "other" && !(writable(file) && writable(dirname(file)))) {
    return { db: openReadOnly(file, timeout), readOnly: true };
  }
  try {
    mkdirSync(dirname(file), { recursive: true });
  } catch (error) {
    throw new StoreError("store.bad-location", `cannot create the directory for ${file}`, {
      cause: error,
      hint: "Choose a --db path in a writable directory",
    });
  }
  return { db: new Database(file, { timeout }), readOnly: false };
}

function openReadOnly(file: string, timeout: number): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout });
  try {
    db.prepare("SELECT count(*) FROM sqlite_schema").get();
    return db;
  } catch (error) {
    db.close();
    const code = (error as { code?: string }).code ?? "";
    if (code !== "SQLITE_READONLY_DIRECTORY" && code !== "SQLITE_CANTOPEN") throw error;
  }
  return new Database(`${pathToFileURL(file).href}?immutable=1`, {
    readonly: true,
    fileMustExist: true,
    timeout,
  });
}

function kindOf(path: string): "absent" | "directory" | "other" {
  try {
    return statSync(path).isDirectory() ? "directory" : "other";
  } catch {
    return "absent";
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function hasSqliteHeader(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const header = Buffer.alloc(SQLITE_HEADER.length);
    const read = readSync(fd, header, 0, header.length, 0);
    // An empty file is an empty database to SQLite: a new store is created in it.
    return read === 0 || header.toString("latin1") === SQLITE_HEADER;
  } catch {
    // Unreadable: SQLite's own error (permission) says it better than a guess here.
    return true;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
