import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, inject } from "vitest";
import { openEventStore } from "../src/log/index.js";
import { openPostgresMemory, openSqliteMemory, sqliteMemoryFile } from "../src/memory/index.js";
import { memoryContract } from "./contract/memory-contract.js";
import { createTestDatabase } from "./support/postgres-server.js";

describe("SQLite memory index", () => {
  memoryContract(async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-memory-"));
    const store = await openEventStore({ db: dir, durability: "fast" });
    return {
      store,
      backend: async () => openSqliteMemory(sqliteMemoryFile(join(dir, "spool.db"))),
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});

describe("PostgreSQL memory index", () => {
  memoryContract(async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    const store = await openEventStore({ db: url, durability: "fast" });
    return {
      store,
      backend: () => openPostgresMemory({ url }),
      cleanup: () => store.close(),
    };
  });
});
