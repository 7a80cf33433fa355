import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import { type EventStore, resolveStoreLocation, sqlitePaths } from "../log/index.js";
import { type Embedder, embedderFromEnv } from "./embedder.js";
import type { MemoryBackend } from "./memory-backend.js";
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
    backend = openSqliteMemory(writable(file) ? file : ":memory:");
  }
  const index = createMemoryIndex({
    store: options.store,
    backend,
    ...(embedder ? { embedder } : {}),
  });
  try {
    await index.catchUp();
  } catch (error) {
    await index.close();
    throw error;
  }
  return index;
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
