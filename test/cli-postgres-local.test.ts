/**
 * `spool postgres start|stop|status` runs the bundled PostgreSQL as a local server that outlives
 * the command: the URL it prints opens a real store (an event appended and read back through
 * `spool --db`), the server keeps its data across a stop and a start, and status says which.
 * As root (this suite's usual user) the server runs as `nobody`, so the folder is made open to
 * others; a folder nobody can reach is refused with a precise error.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";

const root = mkdtempSync(join(tmpdir(), "spool-pg-local-"));
chmodSync(root, 0o755);
const cwd = join(root, "project");
mkdirSync(cwd, { mode: 0o755 });

const spool = async (args: string[], at = cwd) => {
  const { code, stdout, stderr } = await runSpool(args, { cwd: at });
  return { code, out: stdout, err: stderr };
};

afterAll(async () => {
  await spool(["postgres", "stop"]);
  rmSync(root, { recursive: true, force: true });
});

describe("spool postgres", () => {
  it("starts a local server whose URL is a working store, stops it, and starts it again", async () => {
    const before = await spool(["postgres", "status"]);
    expect(before.code).toBe(1);
    expect(before.out).toContain("No local PostgreSQL here yet");

    const started = await spool(["postgres", "start"]);
    expect(started.err).toBe("");
    expect(started.code).toBe(0);
    expect(started.out).toMatch(/PostgreSQL is running on 127\.0\.0\.1:\d+/);
    const url = (await spool(["postgres", "status", "--url"])).out.trim();
    expect(url).toMatch(/^postgres:\/\/spool:[^@]+@127\.0\.0\.1:\d+\/spool$/);
    expect(started.out).toContain(`spool --db '${url}' chat`);

    const created = await spool([
      "--db",
      url,
      "continuities",
      "create",
      "--id",
      "home",
      "--actor",
      "ada",
    ]);
    expect(created.code, created.err).toBe(0);
    const added = await spool([
      "--db",
      url,
      "turn",
      "add",
      "home",
      "hello from postgres",
      "--actor",
      "ada",
    ]);
    expect(added.code, added.err).toBe(0);

    const again = await spool(["postgres", "start"]);
    expect(again.out).toContain("PostgreSQL was already running");

    const stopped = await spool(["postgres", "stop"]);
    expect(stopped.out).toContain("PostgreSQL stopped");
    const after = await spool(["postgres", "status"]);
    expect(after.code).toBe(1);
    expect(after.out).toContain("PostgreSQL is stopped");

    // The data stays: started again, the turn is still in the log.
    expect((await spool(["postgres", "start"])).code).toBe(0);
    const shown = await spool(["--db", url, "log", "show", "home"]);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain("hello from postgres");
  }, 120_000);

  it.runIf(process.getuid?.() === 0)(
    "as root, refuses a folder the server's user cannot reach, saying which and how to fix it",
    async () => {
      const closed = join(root, "closed");
      mkdirSync(join(closed, "inner"), { recursive: true });
      chmodSync(closed, 0o700);
      const refused = await spool(["postgres", "start"], join(closed, "inner"));
      expect(refused.code).toBe(2);
      expect(refused.err).toContain("PostgreSQL refuses to run as root");
      expect(refused.err).toContain(`${closed} is not open to other users`);
    },
  );
});
