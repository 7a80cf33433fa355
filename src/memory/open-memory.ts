import { accessSync, constants, existsSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { type EventStore, resolveStoreLocation, sqlitePaths } from "../log/index.js";
import { type Embedder, embedderFromEnv } from "./embedder.js";
import type { MemoryBackend } from "./memory-backend.js";
import { MemoryError } from "./memory-error.js";
import { createMemoryIndex, type MemoryIndex } from "./memory-index.js";
import { openPostgresMemory } from "./postgres-memory.js";
import { openSqliteMemory, sqliteMemoryFile } from "./sqlite-memory.js";

/** Options of `openMemoryIndex`: the same location options the store was opened with. */
export interface OpenMemoryOptions {
  /** The open store whose log the index is derived from. */
  store: EventStore;
  /** The store's location as given to `openEventStore` (`--db`); default `SPOOL_DB`, then `.spool/`. */
  db?: string;
  cwd?: string;
  /** Read for `SPOOL_DB` and the embedding settings (`embedderFromEnv`); default `process.env`. */
  env?: Record<string, string | undefined>;
  /** An embedder to use instead of the one the environment configures (`null`: none). */
  embedder?: Embedder | null;
  /** PostgreSQL: the schema holding the log's tables (default `public`). */
  schema?: string;
  /**
   * SQLite: when the index file cannot be opened or read (`memory.storage`: damaged, or not a
   * memory index), delete it and build a new one from the log instead of failing (what
   * `spool memory reindex` does). Default false: the error is thrown.
   */
  replaceDamaged?: boolean;
}

/**
 * Opens the memory index of a store and catches it up with the log.
 *
 * Where it lives: for a SQLite store, in a file beside the log's (`.spool/spool.memory.db`), so
 * indexing never takes the log's single write lock from the appends that matter, and the file can
 * be deleted at any time (it is rebuilt from the log); when that folder cannot be written it is
 * built in memory for the process. For PostgreSQL, in `spool_memory_*` tables beside the log's in
 * the same database, shared by every process and machine using the store.
 */
export async function openMemoryIndex(options: OpenMemoryOptions): Promise<MemoryIndex> {
  const env = options.env ?? process.env;
  const location = resolveStoreLocation({
    ...(options.db !== undefined ? { db: options.db } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    env,
  });
  const embedder =
    options.embedder === null ? undefined : (options.embedder ?? embedderFromEnv(env));
  let backend: MemoryBackend;
  if (location.kind === "postgres") {
    backend = await openPostgresMemory({
      url: location.target,
      ...(options.schema !== undefined ? { schema: options.schema } : {}),
    });
  } else {
    const file = sqliteMemoryFile(sqlitePaths(location.target).file);
    const target = writable(file) ? file : ":memory:";
    try {
      return await caughtUp(options.store, openSqliteMemory(target), embedder);
    } catch (error) {
      if (!(options.replaceDamaged && isStorageError(error) && target !== ":memory:")) throw error;
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${target}${suffix}`, { force: true });
      return caughtUp(options.store, openSqliteMemory(target), embedder);
    }
  }
  return caughtUp(options.store, backend, embedder);
}

/** The index over `backend`, caught up with the log (closed again when that fails). */
async function caughtUp(
  store: EventStore,
  backend: MemoryBackend,
  embedder: Embedder | undefined,
): Promise<MemoryIndex> {
  const index = createMemoryIndex({ store, backend, ...(embedder ? { embedder } : {}) });
  try {
    await index.catchUp();
  } catch (error) {
    await index.close();
    throw error;
  }
  return index;
}

function isStorageError(error: unknown): boolean {
  return error instanceof MemoryError && error.code === "memory.storage";
}

/** True when `file` can be written, or made in a folder that can be written. */
function writable(file: string): boolean {
  try {
    accessSync(existsSync(file) ? file : dirname(file), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
