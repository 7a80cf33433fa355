/**
 * The live events route under load, short: 50 SSE subscribers (the `eventsource` package) on one
 * continuity of a listening server while turns are appended at 20 per second for 5 seconds, on
 * SQLite and on PostgreSQL. Every subscriber receives every event exactly once, in order: 0 lost,
 * 0 duplicated. Timing is not asserted (the full measure is `npm run bench -- server`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { AccessTokens, serve } from "../src/server/index.js";
import { createTestDatabase } from "./support/postgres-server.js";
import { openSubscribers, paceTurns } from "./support/sse-load.js";

const SUBSCRIBERS = 50;
const PER_SECOND = 20;
const SECONDS = 5;

describe.each(["sqlite", "postgres"] as const)("on %s", (backend) => {
  let dir: string;
  let store: EventStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "spool-server-load-"));
    const db =
      backend === "sqlite"
        ? join(dir, "spool.db")
        : await createTestDatabase(inject("postgresUrl"));
    store = await openEventStore({ db, cwd: dir, env: {} });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`delivers ${PER_SECOND} turns/s for ${SECONDS} s to ${SUBSCRIBERS} subscribers: 0 lost, 0 duplicated`, async () => {
    const { secret } = await new AccessTokens(store).create({
      actor: "load",
      role: "reader",
      by: "test",
    });
    const server = await serve({
      store,
      workspace: dir,
      env: {},
      lease: { ttlMs: 5_000 },
      port: 0,
      dashboard: false,
      rateLimit: { burst: 10_000, perSecond: 10_000 },
    });
    const backlog = await store.append({
      continuity: "load",
      type: "turn.added",
      actor: "load",
      origin: "test",
      data: { text: "before" },
    });
    const subscribers = await openSubscribers({
      url: server.url,
      token: secret,
      continuity: "load",
      count: SUBSCRIBERS,
      after: 0,
    });
    try {
      const seqs = await paceTurns(store, "load", PER_SECOND, SECONDS);
      await subscribers.reached(seqs.at(-1)!);
      const expected = [backlog.seq, ...seqs];
      for (const record of subscribers.records) expect(record.seqs).toEqual(expected);
    } finally {
      subscribers.close();
      await server.close();
    }
  });
});
