import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";
import { StoreError } from "../src/spec/index.js";
import { collect, turn } from "./support/events.js";

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe("opening a SQLite store that is not what it should be", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-open-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("creates the store and its directory when absent", async () => {
    const store = await openEventStore({ db: join(dir, "nested", "deeper") });
    expect(store.location).toBe(join(dir, "nested", "deeper", "spool.db"));
    await store.append(turn("main", "hello"));
    await store.close();
    const file = await openEventStore({ db: join(dir, "custom.db") });
    expect(file.location).toBe(join(dir, "custom.db"));
    await file.close();
  });

  it("refuses a file that is not a database, saying what to do, and leaves it alone", async () => {
    const path = join(dir, "notes.db");
    writeFileSync(path, "these are my notes, not a database ".repeat(200));
    const error = await failure(openEventStore({ db: path }));
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe("store.not-a-database");
    expect((error as StoreError).message).toContain(path);
    expect((error as StoreError).message).toMatch(/--db/);
    expect(readFileSync(path, "utf8")).toMatch(/^these are my notes/);
  });

  it("refuses another program's SQLite database", async () => {
    const path = join(dir, "app.db");
    const db = new Database(path);
    db.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')",
    );
    db.close();
    const error = (await failure(openEventStore({ db: path }))) as StoreError;
    expect(error.code).toBe("store.foreign-database");
    expect(error.message).toContain("users");
  });

  it("refuses a log written by a newer schema and does not touch it", async () => {
    const store = await openEventStore({ db: dir });
    await store.append(turn("main", "hello"));
    await store.close();
    const file = join(dir, "spool.db");
    const db = new Database(file);
    db.prepare("UPDATE spool_meta SET value = '99' WHERE key = 'schema_version'").run();
    db.close();
    const before = statSync(file).mtimeMs;
    const error = (await failure(openEventStore({ db: dir }))) as StoreError;
    expect(error.code).toBe("store.schema-too-new");
    expect(error.message).toMatch(/version 99.*Upgrade Spool/s);
    expect(statSync(file).mtimeMs).toBe(before);
  });

  it("upgrades a version 1 log in place: its events and file artifacts stay readable", async () => {
    const store = await openEventStore({ db: dir });
    await store.append(turn("main", "hello"));
    const large = Buffer.alloc(100_000, 7);
    const kept = await store.artifacts.put(large);
    await store.close();
    const file = join(dir, "spool.db");
    const db = new Database(file);
    db.exec("DROP TABLE leases; DROP TABLE artifact_blobs");
    db.prepare("UPDATE spool_meta SET value = '1' WHERE key = 'schema_version'").run();
    db.close();
    const upgraded = await openEventStore({ db: dir });
    expect(await collect(upgraded.read({ continuity: "main" }))).toHaveLength(1);
    expect(await upgraded.artifacts.get(kept.hash)).toEqual(large);
    const small = await upgraded.artifacts.put(Buffer.from("a manifest"));
    expect((await upgraded.artifacts.get(small.hash)).toString()).toBe("a manifest");
    await upgraded.close();
    const check = new Database(file, { readonly: true });
    const version = check
      .prepare("SELECT value FROM spool_meta WHERE key = 'schema_version'")
      .pluck()
      .get();
    check.close();
    expect(version).toBe("3");
  });

  it("answers a damaged database with a store error, not a crash", async () => {
    const store = await openEventStore({ db: dir, durability: "fast" });
    for (let i = 0; i < 20; i++)
      await store.appendBatch(
        Array.from({ length: 50 }, (_, k) => turn("main", `${i}.${k} ${"x".repeat(200)}`)),
      );
    await store.close();
    const file = join(dir, "spool.db");
    const checkpoint = new Database(file);
    checkpoint.pragma("wal_checkpoint(TRUNCATE)");
    checkpoint.close();
    const bytes = readFileSync(file);
    bytes.fill(0xa5, 8192, bytes.length - 4096);
    writeFileSync(file, bytes);
    const error = await failure(
      (async () => {
        const damaged = await openEventStore({ db: dir });
        try {
          await collect(damaged.read());
        } finally {
          await damaged.close();
        }
      })(),
    );
    expect(error).toBeInstanceOf(StoreError);
    expect(["store.damaged", "store.io"]).toContain((error as StoreError).code);
    expect((error as StoreError).message).toMatch(/backup|--db/);
  });

  it("rejects a store URL it does not know", async () => {
    const error = await failure(openEventStore({ db: "mysql://root@localhost/app" }));
    expect(error).toMatchObject({ code: "config.db" });
    expect(String((error as Error).message)).toContain("postgres://");
  });
});
