import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  createEventStore,
  type EventStore,
  openSqliteBackend,
  type SqliteBackendOptions,
  verifyChain,
} from "../src/log/index.js";
import { type SpoolEvent, StoreError } from "../src/spec/index.js";
import { delta, turn } from "./support/events.js";

const dirs: string[] = [];
const stores: EventStore[] = [];

afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close().catch(() => undefined)));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "spool-writer-"));
  dirs.push(dir);
  return dir;
}

function open(dir: string, options: Partial<SqliteBackendOptions> = {}): EventStore {
  const store = createEventStore(openSqliteBackend({ path: dir, durability: "fast", ...options }));
  stores.push(store);
  return store;
}

const turns = (continuity: string, count: number, label: string) =>
  Array.from({ length: count }, (_, i) => turn(continuity, `${label} ${i}`));

describe("SQLite writer thread", () => {
  it("stores a large batch from the thread exactly as it returned it", async () => {
    const dir = freshDir();
    const store = open(dir);
    const small = await store.appendBatch(turns("c", 10, "small")); // written on this thread
    const large = await store.appendBatch(turns("c", 1_000, "large")); // on the writer thread
    expect(large.map((event) => event.seq)).toEqual(
      Array.from({ length: 1_000 }, (_, i) => small.length + 1 + i),
    );
    const read: SpoolEvent[] = [];
    for await (const event of store.read({ continuity: "c" })) read.push(event);
    expect(read).toEqual([...small, ...large]);
    expect(await verifyChain(store)).toMatchObject({ ok: true, events: 1_010 });
    expect(await store.continuity("c")).toMatchObject({
      events: 1_010,
      lastSeq: 1_010,
      headHash: large.at(-1)!.hash,
    });
  });

  it("relinks a chain whose head another connection moved since this writer last wrote", async () => {
    const dir = freshDir();
    const mine = open(dir, { threadMinEvents: 0 });
    const other = open(dir, { threadMinEvents: Number.POSITIVE_INFINITY });
    await mine.appendBatch(turns("shared", 300, "first"));
    // `mine` remembers the head it wrote; `other` moves it behind its back.
    const moved = await other.append(turn("shared", "from another connection"));
    const next = await mine.appendBatch(turns("shared", 300, "second"));
    const single = await mine.append(turn("shared", "and one more"));
    expect(next[0]!.seq).toBe(moved.seq + 1);
    const report = await verifyChain(mine, { continuity: "shared" });
    expect(report).toMatchObject({ ok: true, events: 602 });
    const stored: SpoolEvent[] = [];
    for await (const event of other.read({ after: moved.seq })) stored.push(event);
    // What the appends resolved with is what was stored, relinked hashes included.
    expect(stored).toEqual([...next, single]);
  });

  it("keeps append order when small writes follow large ones still in flight", async () => {
    const dir = freshDir();
    const store = open(dir, { threadMinEvents: 100 });
    const pending: Promise<SpoolEvent | SpoolEvent[]>[] = [];
    for (let round = 0; round < 40; round++) {
      // Every third round a large batch (the thread); the others a few small appends, written
      // here when the thread is idle and after the thread's writes when it is not.
      if (round % 3 === 0) pending.push(store.appendBatch(turns("order", 150, `large ${round}`)));
      pending.push(store.append(turn("order", `critical ${round}`)));
      for (let k = 0; k < 4; k++)
        pending.push(store.append(delta("order", `step-${round}`, `d${k}`, `b${k % 2}`)));
      // A turn of the event loop: the queue hands over what it holds, the next round comes after.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = (await Promise.all(pending)).flat();
    const seqs = results.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(await verifyChain(store)).toMatchObject({ ok: true, events: seqs.length });
  });

  it("answers a write the thread could not do with a typed error, stores none of it, and recovers", async () => {
    const dir = freshDir();
    const store = open(dir, { threadMinEvents: 0, busyTimeoutMs: 50 });
    await store.appendBatch(turns("busy", 5, "before"));
    const blocker = new Database(join(dir, "spool.db"));
    try {
      blocker.prepare("BEGIN IMMEDIATE").run();
      const failed = await store.appendBatch(turns("busy", 400, "blocked")).catch((e) => e);
      expect(failed).toBeInstanceOf(StoreError);
      expect(failed).toMatchObject({ code: "store.busy", retryable: true });
      blocker.prepare("ROLLBACK").run();
    } finally {
      blocker.close();
    }
    expect(await store.head()).toBe(5);
    const after = await store.appendBatch(turns("busy", 400, "after"));
    expect(after[0]!.seq).toBe(6);
    expect(await verifyChain(store)).toMatchObject({ ok: true, events: 405 });
  });

  it("checkpoints on a thread of its own under load, and closes it with the store", async () => {
    const dir = freshDir();
    const store = open(dir, { threadMinEvents: 0, checkpoint: { maxEvents: 500, idleMs: 60_000 } });
    for (let round = 0; round < 8; round++) await store.appendBatch(turns("wal", 300, `r${round}`));
    await store.close();
    // Everything written is in the database file once the WAL is checkpointed (as a new
    // connection sees it), and the chain verifies.
    const reopened = open(dir);
    expect(await reopened.head()).toBe(2_400);
    expect(await verifyChain(reopened)).toMatchObject({ ok: true, events: 2_400 });
  });

  it("stores every append still in flight when the store closes", async () => {
    const dir = freshDir();
    const store = open(dir, { threadMinEvents: 0 });
    const fired = Array.from({ length: 3_000 }, (_, i) =>
      store.append(delta("closing", "step-1", `piece ${i}`, `b${i % 2}`)),
    );
    await store.close();
    const stored = await Promise.all(fired);
    expect(stored.at(-1)!.seq).toBe(3_000);
    const reopened = open(dir);
    expect(await reopened.head()).toBe(3_000);
    expect(await verifyChain(reopened)).toMatchObject({ ok: true, events: 3_000 });
  });
});
