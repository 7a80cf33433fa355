import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createEventStore, openSqliteBackend } from "../src/log/index.js";
import { WalCheckpointer } from "../src/log/sqlite/wal-checkpointer.js";
import { collect, turn } from "./support/events.js";

describe("WAL checkpoints off the append path", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-wal-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("copies the WAL into the database file after maxEvents events, not before", async () => {
    const store = createEventStore(
      openSqliteBackend({ path: dir, checkpoint: { maxEvents: 10, idleMs: 600_000 } }),
    );
    const file = join(dir, "spool.db");
    await store.append(turn("c", "first"));
    const before = statSync(file).size;
    for (let i = 1; i < 9; i++) await store.append(turn("c", `turn ${i}`));
    expect(statSync(file).size).toBe(before); // everything so far lives in the WAL
    await store.append(turn("c", "the tenth")); // the tenth event triggers the checkpoint
    expect(statSync(file).size).toBeGreaterThan(before);
    expect(await collect(store.read())).toHaveLength(10);
    await store.close();
  });
});

describe("WalCheckpointer", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits for idleMs without writes, restarting the wait on every write", () => {
    vi.useFakeTimers();
    const run = vi.fn();
    const checkpointer = new WalCheckpointer(run, { idleMs: 200, maxEvents: 1_000 });
    checkpointer.wrote(1);
    vi.advanceTimersByTime(150);
    checkpointer.wrote(1);
    vi.advanceTimersByTime(150);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(50);
    expect(run).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("runs at once under constant load, every maxEvents events", () => {
    vi.useFakeTimers();
    const run = vi.fn();
    const checkpointer = new WalCheckpointer(run, { idleMs: 200, maxEvents: 100 });
    for (let i = 0; i < 25; i++) checkpointer.wrote(10);
    expect(run).toHaveBeenCalledTimes(2);
    checkpointer.stop();
    vi.advanceTimersByTime(1_000);
    expect(run).toHaveBeenCalledTimes(2);
  });
});
