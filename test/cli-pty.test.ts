import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";

const root = fileURLToPath(new URL("..", import.meta.url));

/** util-linux `script` gives a command a real pseudo-terminal: `script -qfec "cmd" /dev/null`. */
const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches ANSI colour codes
const ANSI = /\u001b\[[0-9;]*m/g;

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

/** Runs the CLI from source on a pty; collects everything the terminal shows. */
function spoolOnPty(args: readonly string[]) {
  // `script` without a terminal on its own stdin leaves the pty 0 columns wide: give it a size.
  const command = `stty cols 160 rows 40; ${[
    "exec",
    process.execPath,
    "--import",
    "tsx",
    "src/cli/entry.ts",
    ...args,
  ]
    .map(shellQuote)
    .join(" ")}`;
  const env: Record<string, string | undefined> = {
    ...process.env,
    TERM: "xterm-256color",
    USER: "tester",
  };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  delete env.SPOOL_DB;
  delete env.SPOOL_DEBUG;
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: root,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  const waiting: { needle: string; resolve: () => void; reject: (error: Error) => void }[] = [];
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      for (const waiter of waiting.splice(0)) {
        waiter.reject(
          new Error(
            `exited with ${code} before showing ${JSON.stringify(waiter.needle)}:\n${screen}`,
          ),
        );
      }
      resolve(code);
    });
  });
  const onData = (chunk: Buffer) => {
    screen += chunk.toString("utf8");
    const plain = screen.replace(ANSI, "");
    for (const waiter of [...waiting]) {
      if (plain.includes(waiter.needle)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  return {
    child,
    exited,
    get screen() {
      return screen;
    },
    /** Resolves once the terminal shows `needle` (colours ignored); rejects if the CLI exits first. */
    shows(needle: string): Promise<void> {
      if (screen.replace(ANSI, "").includes(needle)) return Promise.resolve();
      return new Promise((resolve, reject) => waiting.push({ needle, resolve, reject }));
    },
  };
}

describe.skipIf(!hasScript)("spool on a real terminal", () => {
  let dir: string;
  let running: ChildProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-pty-"));
  });

  afterEach(() => {
    if (running && running.exitCode === null && running.signalCode === null)
      running.kill("SIGKILL");
    running = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("log tail --follow shows live events in colour and exits 0 on Ctrl-C", async () => {
    const store = await openEventStore({ db: dir });
    try {
      await store.append({
        continuity: "home",
        type: "continuity.created",
        actor: "ada",
        origin: "test",
        data: { title: "Home" },
      });
      await store.append({
        continuity: "home",
        type: "turn.added",
        actor: "ada",
        origin: "test",
        data: { text: "before following" },
      });

      const tail = spoolOnPty(["log", "tail", "--follow", "--db", dir]);
      running = tail.child;
      await tail.shows("— live —");
      expect(tail.screen.replace(ANSI, "")).toContain("ada: before following");

      await store.append({
        continuity: "home",
        type: "turn.added",
        actor: "bob",
        origin: "test",
        data: { text: "typed while following" },
      });
      await tail.shows("bob: typed while following");

      const plain = tail.screen.replace(ANSI, "");
      expect(plain.indexOf("— live —")).toBeLessThan(plain.indexOf("bob: typed while following"));
      // stdout is a terminal here, so the CLI colours it.
      expect(tail.screen).toMatch(ANSI);

      tail.child.stdin.write("\x03");
      expect(await tail.exited).toBe(0);
      expect(tail.screen).not.toMatch(/\n\s+at /);
    } finally {
      await store.close();
    }
  });
});

describe("spool log tail --follow outside a terminal", () => {
  it("prints plain lines and exits 0 on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-pipe-"));
    const env: Record<string, string | undefined> = { ...process.env, TERM: "xterm-256color" };
    delete env.NO_COLOR;
    delete env.SPOOL_DB;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "src/cli/entry.ts", "log", "tail", "-f", "--json", "--db", dir],
      { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      let stdout = "";
      let stderr = "";
      const exited = new Promise<number | null>((resolve, reject) => {
        child.once("error", reject);
        child.once("close", resolve);
      });
      const live = new Promise<void>((resolve, reject) => {
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString("utf8");
          if (stderr.includes("— live —")) resolve();
        });
        exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)), reject);
      });
      const seen = new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString("utf8");
          if (stdout.includes("\n")) resolve();
        });
        exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)), reject);
      });
      await live;
      const store = await openEventStore({ db: dir });
      try {
        await store.append({
          continuity: "c1",
          type: "continuity.created",
          actor: "ada",
          origin: "test",
          data: {},
        });
      } finally {
        await store.close();
      }
      await seen;
      expect(JSON.parse(stdout)).toMatchObject({
        seq: 1,
        continuity: "c1",
        type: "continuity.created",
      });
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(stderr).toBe("— live —\n");
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
