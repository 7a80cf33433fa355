import pg from "pg";
import { describe, inject } from "vitest";
import { createEventStore, openPostgresBackend } from "../src/log/index.js";
import { eventStoreContract } from "./contract/event-store-contract.js";
import { createTestDatabase } from "./support/postgres-server.js";

describe("PostgreSQL event store", () => {
  eventStoreContract(async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    const raw = async (sql: string, params: unknown[] = []) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(sql, params);
      } finally {
        await client.end();
      }
    };
    return {
      location: url,
      open: async (options) =>
        createEventStore(await openPostgresBackend({ url, durability: "fast" }), options),
      openBackend: () => openPostgresBackend({ url, durability: "fast" }),
      tamper: (seq, dataJson) =>
        raw("UPDATE spool_events SET data = $1 WHERE seq = $2", [dataJson, seq]),
      dropLast: () =>
        raw("DELETE FROM spool_events WHERE seq = (SELECT max(seq) FROM spool_events)"),
      cleanup: async () => {},
    };
  });
});
