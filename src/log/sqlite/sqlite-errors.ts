import { StoreError } from "../../spec/index.js";
import { seqMovedError } from "../seq-prediction.js";

/** Maps a better-sqlite3 error to a `StoreError` that says what to do about it. */
export function sqliteError(error: unknown, file: string): StoreError {
  if (error instanceof StoreError) return error;
  const code = (error as { code?: string } | undefined)?.code ?? "";
  const detail = error instanceof Error ? error.message : String(error);
  switch (true) {
    case code === "SPOOL_LEASE_LOST":
      return new StoreError("store.lease-lost", detail, {
        hint: "Another process took the continuity over after this one's lease lapsed; stop running it here and follow it, or acquire the lease again once it is free",
      });
    case code === "SPOOL_SEQ_MOVED":
      return seqMovedError(detail);
    case code === "SQLITE_NOTADB":
      return new StoreError(
        "store.not-a-database",
        `${file} is not a SQLite database (or it is encrypted or damaged)`,
        {
          cause: error,
          hint: "Point --db (or SPOOL_DB) at a Spool store, or move this file away so a new store can be created",
        },
      );
    case code.startsWith("SQLITE_CORRUPT"):
      return new StoreError("store.damaged", `${file} is damaged: ${detail}`, {
        cause: error,
        hint: "Restore it from a backup; `spool log verify` reports how much of the log still checks out",
      });
    case code.startsWith("SQLITE_READONLY"):
      return new StoreError("store.read-only", `${file} can be read but not written: ${detail}`, {
        cause: error,
        hint: "Commands that only read (spool continuities, spool log show, spool log verify) work; to write, run as a user who can write the file and its folder",
      });
    case code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"):
      return new StoreError("store.busy", `${file} is locked by another writer: ${detail}`, {
        cause: error,
        retryable: true,
        hint: "Retry; if it persists, find the process holding the database open",
      });
    case code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_PERM"):
      return new StoreError("store.bad-location", `cannot open ${file} for writing: ${detail}`, {
        cause: error,
        hint: "Check that the directory exists and is writable, or choose another --db",
      });
    case code === "SQLITE_FULL":
      return new StoreError("store.io", `the disk holding ${file} is full`, {
        cause: error,
        retryable: true,
        hint: "Free space on that disk; nothing that was acknowledged has been lost",
      });
    default:
      return new StoreError("store.io", `${file}: ${detail}`, {
        cause: error,
        retryable: code.startsWith("SQLITE_IOERR"),
      });
  }
}
