import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe } from "vitest";
import { createEventStore, openSqliteBackend } from "../src/log/index.js";
import { eventStoreContract } from "./contract/event-store-contract.js";
import type { HarnessFactory } from "./contract/harness.js";

/**
 * The contract on a SQLite store; `threadMinEvents` 0 sends every write to the writer thread,
 * where by default only large ones go.
 */
function sqliteHarness(threadMinEvents?: number): HarnessFactory {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-sqlite-"));
    const raw = (action: (db: Database.Database) => void) => {
      const db = new Database(join(dir, "spool.db"));
      try {
        action(db);
      } finally {
        db.close();
      }
    };
    return {
      location: dir,
      // A ten-minute poll: live delivery between connections must come from the WAL file watch.
      open: async (options) =>
        createEventStore(
          openSqliteBackend({
            path: dir,
            durability: "fast",
            pollIntervalMs: 600_000,
            threadMinEvents,
          }),
          options,
        ),
      openBackend: async () =>
        openSqliteBackend({
          path: dir,
          durability: "fast",
          pollIntervalMs: 600_000,
          threadMinEvents,
        }),
      tamper: async (seq, dataJson) =>
        raw((db) => db.prepare("UPDATE events SET data = ? WHERE seq = ?").run(dataJson, seq)),
      dropLast: async () =>
        raw((db) =>
          db.prepare("DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)").run(),
        ),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  };
}

describe("SQLite event store", () => {
  eventStoreContract(sqliteHarness());
});

describe("SQLite event store, every write on the writer thread", () => {
  eventStoreContract(sqliteHarness(0));
});
