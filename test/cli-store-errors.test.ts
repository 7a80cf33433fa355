/**
 * How the CLI meets a store that is not what it should be: a `SPOOL_DB` that cannot be a store
 * is refused with a typed error (exit 3) by reading and writing commands alike; a store the user
 * can read but not write is still read; `spool log verify` on a damaged file says how much checks
 * out.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";
import { runSpool } from "./support/cli.js";
import { turn } from "./support/events.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const TSX = pathToFileURL(createRequire(join(root, "package.json")).resolve("tsx")).href;
const ENTRY = join(root, "src", "cli", "entry.ts");
const isRoot = process.getuid?.() === 0;

describe("a store location that cannot be a store", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-store-errors-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const spool = (args: string[], db: string) =>
    runSpool(args, { cwd: dir, env: { SPOOL_DB: db, HOME: dir } });

  it("refuses a path under a file, for reading and writing commands, and creates nothing", async () => {
    const notes = join(dir, "notes.txt");
    writeFileSync(notes, "my notes\n");
    for (const db of [join(notes, "spool.db"), notes]) {
      for (const args of [["continuities"], ["log", "verify"], ["continuities", "create"]]) {
        const result = await spool(args, db);
        expect(result.code, `${args.join(" ")} with SPOOL_DB=${db}`).toBe(3);
        expect(result.stderr).toContain(
          `spool: ${notes} is a file, not a directory, so ${join(notes, "spool.db")} cannot be a Spool store. Point --db (or SPOOL_DB) at a directory, a .db file or a postgres:// URL`,
        );
        expect(result.stdout).toBe("");
      }
    }
    expect(readFileSync(notes, "utf8")).toBe("my notes\n");
  });

  it("refuses a file that is not SQLite before opening it, and leaves it untouched", async () => {
    const text = join(dir, "log.db");
    writeFileSync(text, "not a database at all\n");
    for (const args of [["continuities"], ["turn", "add", "main", "hi"], ["log", "verify"]]) {
      const result = await spool(args, text);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(`${text} is not a Spool store: it is not a SQLite database`);
    }
    expect(readFileSync(text, "utf8")).toBe("not a database at all\n");
  });
});

describe("spool log verify on a damaged store", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-damaged-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reports every event that can be read as checked, and where the damage starts", async () => {
    const store = await openEventStore({ db: dir, durability: "fast" });
    for (let i = 0; i < 6; i++) {
      await store.appendBatch(
        Array.from({ length: 150 }, (_, k) => turn(`c${k % 3}`, `${i}.${k} ${"x".repeat(300)}`)),
      );
    }
    await store.close();
    const file = join(dir, "spool.db");
    const checkpoint = new Database(file);
    checkpoint.pragma("wal_checkpoint(TRUNCATE)");
    checkpoint.close();
    const bytes = readFileSync(file);
    // Damage pages near the end, where the newest events' leaves are: a prefix stays readable.
    bytes.fill(0xa5, bytes.length - 4096 * 6, bytes.length - 4096 * 2);
    writeFileSync(file, bytes);

    // What can be read, one row at a time, straight from SQLite: the events before the damage.
    const raw = new Database(file, { readonly: true });
    let readable = 0;
    try {
      for (let seq = 1; seq <= 900; seq++) {
        raw.prepare("SELECT data FROM events WHERE seq = ?").get(seq);
        readable = seq;
      }
    } catch {
      // the first unreadable event
    } finally {
      raw.close();
    }
    expect(readable).toBeGreaterThan(0);
    expect(readable).toBeLessThan(900);

    const result = await runSpool(["log", "verify", "--db", dir], { cwd: dir, env: {} });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(1);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(
      `DAMAGED: ${readable.toLocaleString("en-US")} events in 3 continuities check out (through seq ${readable}); the log cannot be read past them`,
    );
    expect(lines[1]).toBe(`  reason: ${file} is damaged: database disk image is malformed`);
    const json = await runSpool(["log", "verify", "--db", dir, "--json"], { cwd: dir, env: {} });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      events: readable,
      damage: { afterSeq: readable },
    });
  });
});

describe("a store this user can read but not write", () => {
  let base: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), "spool-read-only-"));
  });
  afterEach(() => {
    chmodSync(join(base, "store"), 0o755);
    rmSync(base, { recursive: true, force: true });
  });

  /**
   * `spool args` in its own process, as a user who cannot write the store: as `nobody` when the
   * tests run as root (whom no file mode stops), else as this user.
   */
  function spoolReadOnly(args: string[]) {
    const child = spawn(process.execPath, ["--import", TSX, ENTRY, ...args], {
      cwd: base,
      env: { PATH: process.env.PATH, HOME: base, SPOOL_DB: join(base, "store") },
      stdio: ["ignore", "pipe", "pipe"],
      ...(isRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    return new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        child.once("error", reject);
        child.once("close", (code) => resolve({ code, stdout, stderr }));
      },
    );
  }

  it("lists, shows and verifies it, refuses a write with store.read-only, and changes no file", {
    timeout: 120_000,
  }, async () => {
    const db = join(base, "store");
    const store = await openEventStore({ db });
    await store.append(turn("main", "hello"));
    await store.append(turn("main", "again"));
    await store.close();
    // Readable by everyone (the child may be `nobody`), writable by no one but root.
    chmodSync(base, 0o755);
    chmodSync(join(db, "spool.db"), 0o444);
    chmodSync(db, 0o555);
    const before = readFileSync(join(db, "spool.db"));

    const listed = await spoolReadOnly(["continuities", "--json"]);
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ continuity: "main", events: 2 });

    const verified = await spoolReadOnly(["log", "verify"]);
    expect(verified.stdout).toBe("OK: 2 events in 1 continuity verified\n");
    expect(verified.code).toBe(0);

    const shown = await spoolReadOnly(["log", "show", "main"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("again");

    const write = await spoolReadOnly(["turn", "add", "main", "one more"]);
    expect(write.code).toBe(3);
    expect(write.stderr).toContain(`${join(db, "spool.db")} can be read but not written`);
    expect(readFileSync(join(db, "spool.db")).equals(before)).toBe(true);
  });
});
