import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createEventStore,
  type EventStore,
  openSqliteBackend,
  verifyChain,
} from "../src/log/index.js";
import { type NewEvent, StoreError } from "../src/spec/index.js";
import { collect, turn } from "./support/events.js";

/** `n` turns of continuity `continuity`, numbered from `from`. */
function turns(continuity: string, n: number, from = 0): NewEvent[] {
  return Array.from({ length: n }, (_, k) =>
    turn(continuity, `turn ${from + k} ✓ ${"x".repeat(k % 7)}`),
  );
}

describe("large batches on SQLite", () => {
  let dir: string;
  let store: EventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-writer-"));
    store = createEventStore(openSqliteBackend({ path: dir, busyTimeoutMs: 50 }));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("interleaves large batches and single appends in one gapless, verifiable order", async () => {
    // Awaited one by one, so each is its own transaction.
    const written = [
      await store.appendBatch(turns("a", 1_000)),
      await store.append(turn("a", "small")),
      await store.appendBatch(turns("b", 450)),
      await store.appendBatch(turns("a", 3, 1_000)),
      await store.appendBatch(turns("b", 701, 450)),
    ];
    const flat = written.flat();
    expect(flat.map((event) => event.seq)).toEqual(flat.map((_, index) => index + 1));
    const stored = await collect(store.read());
    expect(stored).toEqual(flat);
    expect(stored.filter((event) => event.continuity === "a")).toHaveLength(1_004);
    const report = await verifyChain(store);
    expect(report.mismatch).toBeUndefined();
    expect(report.events).toBe(2_155);
    expect((await store.continuity("b"))?.events).toBe(1_151);
  });

  it("writes nothing of a batch it could not commit, and goes on afterwards", async () => {
    await store.appendBatch(turns("a", 300));
    const other = new Database(join(dir, "spool.db"));
    other.exec("BEGIN IMMEDIATE"); // another writer holds the lock past the 50 ms busy timeout
    const failure = await store.appendBatch(turns("a", 500, 300)).then(
      () => undefined,
      (error: unknown) => error,
    );
    other.exec("ROLLBACK");
    other.close();
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).code).toBe("store.busy");
    expect((failure as StoreError).retryable).toBe(true);
    expect(await store.head()).toBe(300);
    const after = await store.appendBatch(turns("a", 500, 300));
    expect(after[0]!.seq).toBe(301);
    expect(after.at(-1)!.seq).toBe(800);
    expect((await verifyChain(store)).mismatch).toBeUndefined();
  });

  it("refuses a batch once the store is closed", async () => {
    await store.appendBatch(turns("a", 250));
    await store.close();
    const failure = await store.appendBatch(turns("a", 250)).catch((error: unknown) => error);
    expect((failure as StoreError).code).toBe("store.closed");
  });
});
