import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { type CliIo, main } from "../src/cli/main.js";
import { openEventStore } from "../src/log/index.js";
import { awaitableOutput } from "./support/cli.js";
import { createTestDatabase } from "./support/postgres-server.js";

let dir: string;
let db: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-cli-"));
  db = join(dir, "store");
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function makeIo(
  options: {
    env?: Record<string, string | undefined>;
    tty?: boolean;
    columns?: number;
    signal?: AbortSignal;
  } = {},
) {
  const stdout = awaitableOutput(options.tty ?? false, options.columns);
  const stderr = awaitableOutput(options.tty ?? false);
  const io: CliIo = {
    stdout,
    stderr,
    env: { USER: "tester", ...options.env },
    cwd: dir,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  return { io, stdout, stderr };
}

async function spool(args: string[], options: Parameters<typeof makeIo>[0] = {}) {
  const { io, stdout, stderr } = makeIo(options);
  const code = await main(args, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A store with continuity `home` (seq 1) and two turns (seq 2, 3). */
async function seed(target = db): Promise<void> {
  expect(
    (await spool(["continuities", "create", "--id", "home", "--title", "Home", "--db", target]))
      .code,
  ).toBe(0);
  expect((await spool(["turn", "add", "home", "hello", "there", "--db", target])).stdout).toBe(
    "2\n",
  );
  expect((await spool(["turn", "add", "home", "second turn", "--db", target])).stdout).toBe("3\n");
}

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at /);

describe("help and usage", () => {
  it("spool --help lists every command; --version prints the version", async () => {
    const help = await spool(["--help"]);
    expect(help.code).toBe(0);
    for (const command of [
      "continuities",
      "continuities create",
      "turn add",
      "log show",
      "log tail",
      "log verify",
      "--db",
    ]) {
      expect(help.stdout).toContain(command);
    }
    expect((await spool(["-h"])).stdout).toBe(help.stdout);
    expect((await spool(["--version"])).stdout).toMatch(/^spool \d+\.\d+\.\d+/);
  });

  it.each([
    ["continuities"],
    ["continuities", "create"],
    ["turn"],
    ["turn", "add"],
    ["log"],
    ["log", "show"],
    ["log", "tail"],
    ["log", "verify"],
  ])("spool %s %s --help prints its usage with every option and an example", async (...command) => {
    const result = await spool([...command, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: spool /);
    expect(result.stdout).toContain(command.join(" "));
    expect(result.stdout).toContain("spool ");
    if (command.length === 2 || command[0] === "continuities") {
      expect(result.stdout).toContain("--db");
      expect(result.stdout).toContain("Examples:");
    }
    expect((await spool([...command, "-h"])).stdout).toBe(result.stdout);
  });

  it("--help wins over other arguments, and `spool help <command>` works", async () => {
    const show = await spool(["log", "show", "--help"]);
    expect(await spool(["log", "show", "home", "--bogus", "--help"])).toMatchObject({
      code: 0,
      stdout: show.stdout,
    });
    expect(await spool(["help", "log", "show"])).toMatchObject({ code: 0, stdout: show.stdout });
    for (const option of ["--after", "--limit", "--type", "--json", "--db"])
      expect(show.stdout).toContain(option);
  });

  it.each([
    [[], "Usage: spool <command>"],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["contnuities"], "did you mean `spool continuities`"],
    [["log"], "missing subcommand"],
    [["log", "shwo", "home"], "did you mean `spool log show`"],
    [["log", "show"], "missing <continuity>"],
    [["log", "show", "home", "--bogus"], "unknown option --bogus"],
    [
      ["log", "show", "home", "--limit", "ten"],
      '--limit must be a whole number of at least 1, not "ten"',
    ],
    [["log", "show", "home", "--type", "turn.add"], "did you mean turn.added"],
    [["log", "tail", "--lines", "3", "--after", "1"], "--after and --lines cannot be combined"],
    [["log", "tail", "--db"], "option --db needs a value"],
    [["turn", "add", "home"], "missing <text…>"],
    [
      ["continuities", "create", "--id", "not ok"],
      '--id "not ok" must start with a letter or digit',
    ],
    [["log", "verify", "--db", "mysql://x@y/z"], "unsupported store URL scheme"],
  ])("bad usage %j exits 2 saying what was wrong", async (args, message) => {
    const result = await spool([...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toMatch(/^spool: |^Usage: /);
    noStack(result.stderr);
  });
});

describe("continuities", () => {
  it("with none, names the store and how to create one, without creating it", async () => {
    const result = await spool(["continuities", "--db", db]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(join(db, "spool.db"));
    expect(result.stderr).toContain(`spool continuities create --db ${db}`);
    expect(existsSync(db)).toBe(false);
  });

  it("creates continuities and lists them as a table and as JSON lines", async () => {
    await seed();
    const created = await spool(["continuities", "create", "--db", db, "--title", "Groceries"]);
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const table = await spool(["continuities", "--db", db]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+EVENTS\s+LAST ACTIVITY\s+HEAD$/);
    expect(lines[1]).toMatch(/^home\s+Home\s+3\s+\d{4}-\d\d-\d\dT[\d:]+Z\s+[0-9a-f]{12}$/);
    expect(lines[2]).toMatch(new RegExp(`^${id}\\s+Groceries\\s+1\\s`));
    expect(table.stdout).not.toContain("\x1b[");

    const json = await spool(["continuities", "--json", "--db", db]);
    const rows = json.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows).toMatchObject([
      { continuity: "home", title: "Home", events: 3, firstSeq: 1, lastSeq: 3 },
      { continuity: id, title: "Groceries", events: 1, firstSeq: 4 },
    ]);
    expect(rows[0].headHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("records actor ($USER or --actor) and origin cli, and refuses an id that exists", async () => {
    await spool(["continuities", "create", "--id", "home", "--db", db]);
    await spool(["continuities", "create", "--id", "work", "--actor", "alice", "--db", db], {
      env: { USER: undefined },
    });
    const again = await spool([
      "continuities",
      "create",
      "--id",
      "home",
      "--title",
      "Again",
      "--db",
      db,
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^spool: continuity "home" already exists/);
    const store = await openEventStore({ db });
    try {
      const events = [];
      for await (const event of store.read()) events.push(event);
      expect(
        events.map((event) => [event.continuity, event.type, event.actor, event.origin]),
      ).toEqual([
        ["home", "continuity.created", "tester", "cli"],
        ["work", "continuity.created", "alice", "cli"],
      ]);
    } finally {
      await store.close();
    }
    const local = await spool(["continuities", "create", "--id", "solo", "--db", db], {
      env: { USER: undefined },
    });
    expect(local.code).toBe(0);
    const show = await spool(["log", "show", "solo", "--json", "--db", db]);
    expect(JSON.parse(show.stdout).actor).toBe("local");
  });

  it("finds the store through SPOOL_DB, then .spool/ in the working directory", async () => {
    await spool(["continuities", "create", "--id", "viaenv"], { env: { SPOOL_DB: db } });
    expect((await spool(["continuities", "--db", db])).stdout).toContain("viaenv");
    await spool(["continuities", "create", "--id", "viacwd"]);
    expect(existsSync(join(dir, ".spool", "spool.db"))).toBe(true);
    expect((await spool(["continuities"])).stdout).toContain("viacwd");
    expect((await spool(["--db", db, "continuities"])).stdout).toContain("viaenv");
  });
});

describe("turn add", () => {
  it("prints the seq of the new turn", async () => {
    await seed();
    const result = await spool([
      "turn",
      "add",
      "home",
      "--actor",
      "bob",
      "--db",
      db,
      "--",
      "-1",
      "is",
      "a",
      "number",
    ]);
    expect(result).toMatchObject({ code: 0, stdout: "4\n" });
    const event = JSON.parse(
      (await spool(["log", "show", "home", "--after", "3", "--json", "--db", db])).stdout,
    );
    expect(event).toMatchObject({
      seq: 4,
      type: "turn.added",
      actor: "bob",
      origin: "cli",
      data: { text: "-1 is a number" },
    });
  });

  it("refuses a continuity that does not exist, pointing to spool continuities", async () => {
    await seed();
    const result = await spool(["turn", "add", "nowhere", "hi", "--db", db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no continuity "nowhere"');
    expect(result.stderr).toContain("spool continuities");
    const missingStore = await spool(["turn", "add", "home", "hi", "--db", join(dir, "absent")]);
    expect(missingStore.code).toBe(1);
    expect(existsSync(join(dir, "absent"))).toBe(false);
  });
});

describe("log show", () => {
  it("prints one line per event: seq, time, type, stream, summary", async () => {
    await seed();
    const result = await spool(["log", "show", "home", "--db", db]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^\s+1 {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}continuity\.created\s+continuity\s+"Home" by tester$/,
    );
    expect(lines[1]).toMatch(/^\s+2 .* turn\.added\s+continuity\s+tester: hello there$/);
    expect(result.stdout).not.toContain("\x1b[");
  });

  it("filters with --after, --limit and --type, and prints stored events with --json", async () => {
    await seed();
    const after = await spool([
      "log",
      "show",
      "home",
      "--after",
      "1",
      "--limit",
      "1",
      "--json",
      "--db",
      db,
    ]);
    const events = after.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events).toMatchObject([{ seq: 2, type: "turn.added", data: { text: "hello there" } }]);
    expect(events[0].hash).toMatch(/^[0-9a-f]{64}$/);
    const typed = await spool(["log", "show", "home", "--type", "continuity.created", "--db", db]);
    expect(typed.stdout.trimEnd().split("\n")).toHaveLength(1);
    const both = await spool([
      "log",
      "show",
      "home",
      "--type",
      "turn.added",
      "--type",
      "continuity.created",
      "--db",
      db,
    ]);
    expect(both.stdout.trimEnd().split("\n")).toHaveLength(3);
  });

  it("keeps summaries on one line, strips control characters and fits the terminal", async () => {
    await seed();
    await spool([
      "turn",
      "add",
      "home",
      `line one\nline two \x1b[2J${"x".repeat(300)}`,
      "--db",
      db,
    ]);
    const result = await spool(["log", "show", "home", "--after", "3", "--db", db], {
      tty: true,
      columns: 120,
      env: { NO_COLOR: "1" },
    });
    const line = result.stdout.trimEnd();
    expect(line).not.toContain("\n");
    expect(line).not.toContain("\x1b");
    expect(line).toContain("tester: line one line two [2J");
    expect(Array.from(line).length).toBeLessThanOrEqual(120);
    expect(line.endsWith("…")).toBe(true);
  });

  it("colours only a terminal", async () => {
    await seed();
    const tty = await spool(["log", "show", "home", "--db", db], { tty: true, columns: 160 });
    expect(tty.stdout).toContain("\x1b[");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: it matches ANSI colour codes
    expect(tty.stdout.replace(/\x1b\[\d+m/g, "")).toBe(
      (await spool(["log", "show", "home", "--db", db])).stdout,
    );
  });

  it("exits 1 for a continuity that does not exist", async () => {
    await seed();
    const result = await spool(["log", "show", "nope", "--db", db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no continuity "nope"');
  });
});

describe("log tail", () => {
  it("prints the last events of the log or of one continuity", async () => {
    await seed();
    await spool(["continuities", "create", "--id", "other", "--db", db]);
    for (let i = 0; i < 25; i++) await spool(["turn", "add", "home", `turn ${i}`, "--db", db]);
    const all = await spool(["log", "tail", "--db", db]);
    const seqs = (text: string) =>
      text
        .trimEnd()
        .split("\n")
        .map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(seqs(all.stdout)).toEqual(Array.from({ length: 20 }, (_, i) => 10 + i));
    expect(all.stdout).toMatch(/29 .* home\s+turn\.added\s+continuity\s+tester: turn 24/);
    expect(seqs((await spool(["log", "tail", "-n", "2", "--db", db])).stdout)).toEqual([28, 29]);
    const home = await spool([
      "log",
      "tail",
      "--continuity",
      "home",
      "--lines",
      "30",
      "--json",
      "--db",
      db,
    ]);
    const events = home.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events).toHaveLength(28);
    expect(events.every((event) => event.continuity === "home")).toBe(true);
    expect(
      seqs((await spool(["log", "tail", "--continuity", "other", "--db", db])).stdout),
    ).toEqual([4]);
    expect(seqs((await spool(["log", "tail", "--after", "27", "--db", db])).stdout)).toEqual([
      28, 29,
    ]);
  });

  it("exits 1 for a store or continuity that does not exist", async () => {
    expect((await spool(["log", "tail", "--db", db])).code).toBe(1);
    expect(existsSync(db)).toBe(false);
    await seed();
    expect((await spool(["log", "tail", "--continuity", "nope", "--db", db])).code).toBe(1);
  });

  it("--follow prints live events until stopped, then exits 0", async () => {
    await seed();
    const stop = new AbortController();
    const { io, stdout, stderr } = makeIo({ signal: stop.signal });
    const running = main(["log", "tail", "--follow", "--continuity", "home", "--db", db], io);
    await stderr.until("— live —");
    expect(stdout.text).toContain("tester: second turn");
    const store = await openEventStore({ db });
    try {
      await store.append({
        continuity: "home",
        type: "turn.added",
        actor: "ada",
        origin: "test",
        data: { text: "live one" },
      });
    } finally {
      await store.close();
    }
    await stdout.until("ada: live one");
    stop.abort();
    expect(await running).toBe(0);
    expect(stderr.text).toBe("— live —\n");
  });
});

describe("log verify", () => {
  it("reports OK for an intact log", async () => {
    await seed();
    expect(await spool(["log", "verify", "--db", db])).toMatchObject({
      code: 0,
      stdout: "OK: 3 events in 1 continuity verified\n",
    });
    await spool(["continuities", "create", "--id", "work", "--db", db]);
    expect((await spool(["log", "verify", "--db", db])).stdout).toBe(
      "OK: 4 events in 2 continuities verified\n",
    );
    expect((await spool(["log", "verify", "--continuity", "work", "--db", db])).stdout).toBe(
      "OK: 1 event in 1 continuity verified\n",
    );
    const json = JSON.parse((await spool(["log", "verify", "--json", "--db", db])).stdout);
    expect(json).toMatchObject({ ok: true, events: 4, continuities: 2 });
  });

  it("names the first altered event and exits 1", async () => {
    await seed();
    const raw = new Database(join(db, "spool.db"));
    raw.prepare(`UPDATE events SET data = '{"text":"evil"}' WHERE seq = 2`).run();
    raw.close();
    const result = await spool(["log", "verify", "--db", db]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("at seq 2 (id ");
    expect(result.stdout).toContain('in continuity "home"');
    expect(result.stdout).toMatch(/expected hash: [0-9a-f]{64}\n\s+actual hash: {3}[0-9a-f]{64}/);
    const json = await spool(["log", "verify", "--json", "--db", db]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      mismatch: { continuity: "home", seq: 2 },
    });
  });

  it("exits 1 when there is no store to verify", async () => {
    const result = await spool(["log", "verify", "--db", db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("there is no Spool store at");
  });
});

describe("store errors", () => {
  it("a foreign SQLite file exits 3 with a message and no stack trace", async () => {
    const file = join(dir, "notes.db");
    const raw = new Database(file);
    raw.exec("CREATE TABLE notes (body TEXT)");
    raw.close();
    for (const args of [
      ["continuities"],
      ["log", "verify"],
      ["continuities", "create"],
      ["log", "tail", "-f"],
    ]) {
      const result = await spool([...args, "--db", file]);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/^spool: .*notes\.db is a SQLite database but not a Spool log/);
      noStack(result.stderr);
    }
    const debug = await spool(["continuities", "--db", file], { env: { SPOOL_DEBUG: "1" } });
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it("an unreachable PostgreSQL exits 3 without printing its password", async () => {
    const url = "postgres://spool:secret@127.0.0.1:1/x";
    for (const args of [["continuities"], ["log", "show", "home"], ["continuities", "create"]]) {
      const result = await spool([...args, "--db", url]);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/^spool: /);
      expect(result.stderr).toContain("127.0.0.1:1");
      expect(result.stdout + result.stderr).not.toContain("secret");
      noStack(result.stderr);
    }
    const debug = await spool(["log", "verify", "--db", url], { env: { SPOOL_DEBUG: "1" } });
    expect(debug.code).toBe(3);
    expect(debug.stderr).not.toContain("secret");
  });
});

const postgresUrl = inject("postgresUrl");

describe.skipIf(!postgresUrl)("against PostgreSQL", () => {
  it("creates, adds, shows, tails and verifies without printing the password", async () => {
    const url = await createTestDatabase(postgresUrl);
    const password = decodeURIComponent(new URL(url).password);
    await seed(url);
    const outputs = [
      await spool(["continuities", "--db", url]),
      await spool(["log", "show", "home", "--db", url]),
      await spool(["log", "tail", "-n", "1", "--db", url]),
      await spool(["log", "verify", "--db", url]),
      await spool(["log", "show", "nope", "--db", url]),
    ];
    expect(outputs.map((result) => result.code)).toEqual([0, 0, 0, 0, 1]);
    expect(outputs[0]!.stdout).toMatch(/^home\s+Home\s+3\s/m);
    expect(outputs[2]!.stdout).toContain("tester: second turn");
    expect(outputs[3]!.stdout).toBe("OK: 3 events in 1 continuity verified\n");
    for (const result of outputs) expect(result.stdout + result.stderr).not.toContain(password);
  });
});
