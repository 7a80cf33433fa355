/**
 * One owner per continuity between `spool serve` and the terminal, as real processes on one
 * store (SQLite and PostgreSQL): a turn sent over HTTP while `spool chat` runs the continuity is
 * left to the chat (the server runs nothing beside it), and once the chat has exited the server
 * runs the next HTTP turn itself; while the server runs a turn, `spool chat` follows and
 * `spool run --continuity` queues, and the server runs what they queued. Every turn is answered
 * exactly once, by one model call, and the log replays.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SpoolEvent } from "../src/spec/index.js";
import { type BundledScript, bundleScript } from "./support/child-process.js";
import { runSpool } from "./support/cli.js";
import { eventsOf, type SpoolProcess } from "./support/cli-e2e.js";
import { deferred, heldAnswer } from "./support/held-answers.js";
import { type LeaseProcesses, leaseProcesses } from "./support/lease-processes.js";

const CONTINUITY = "shared";

let bundle: BundledScript;
beforeAll(async () => {
  bundle = await bundleScript("src/cli/entry.ts");
});
afterAll(() => bundle?.remove());

interface Setup extends Omit<LeaseProcesses, "events"> {
  /** Starts `spool serve --port 0` and resolves with its URL once it listens. */
  serve(): Promise<{ process: SpoolProcess; url: string }>;
  /** An owner token's secret. */
  token(): Promise<string>;
  events(): Promise<SpoolEvent[]>;
}

async function setup(kind: "sqlite" | "postgres"): Promise<Setup> {
  const processes = await leaseProcesses(kind, bundle, {
    prefix: "spool-serve-lease-",
    ttlMs: 2_000,
  });
  const { workspace, db, spool } = processes;
  return {
    ...processes,
    async serve() {
      const process = spool(["serve", "--port", "0"]);
      process.child.stdin.end();
      await process.shows(/ on http:\/\/\S+ \(Ctrl-C stops it\)/);
      const url = /on (http:\/\/\S+) \(Ctrl-C/.exec(process.plain())![1]!;
      return { process, url };
    },
    async token() {
      const made = await runSpool(["tokens", "create", "--actor", "alice", "--role", "owner"], {
        cwd: workspace.dir,
        env: workspace.env({ SPOOL_DB: db }),
      });
      expect(made.code).toBe(0);
      return made.stdout.trim();
    },
    events: () => processes.events(CONTINUITY),
  };
}

async function postTurn(url: string, token: string, text: string): Promise<number> {
  const res = await fetch(`${url}/api/continuities/${CONTINUITY}/turns`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  await res.text();
  return res.status;
}

/** Each turn was answered by one run that completed once; no run was interrupted. */
function expectEachTurnOnce(events: SpoolEvent[], turns: string[]): void {
  expect(
    eventsOf(events, "turn.added")
      .map((event) => event.data.text)
      .sort(),
  ).toEqual([...turns].sort());
  const started = eventsOf(events, "run.started").filter((event) => !event.data.resumed);
  const ids = started.map((event) => event.data.turn);
  expect(new Set(ids).size).toBe(turns.length);
  expect(ids).toHaveLength(turns.length);
  const completed = eventsOf(events, "run.completed").filter(
    (event) => event.data.status !== "continued",
  );
  expect(completed.map((event) => event.data.status)).toEqual(turns.map(() => "completed"));
  // A process taking a continuity over logs what it found; nothing was interrupted, ever.
  for (const recovery of eventsOf(events, "recovery.started")) {
    expect(recovery.data).toMatchObject({ open_runs: [], waiting_turns: 0 });
  }
}

async function completedRuns(s: Setup): Promise<number> {
  return eventsOf(await s.events(), "run.completed").length;
}

describe.each(["sqlite", "postgres"] as const)("spool serve beside spool chat on %s", (kind) => {
  it("leaves a continuity the chat runs to it, and runs the next turn once the chat has gone", async () => {
    const s = await setup(kind);
    try {
      const held = deferred();
      const arrived = deferred();
      s.model.respond(
        heldAnswer("<response>first answer</response>", held.promise, arrived.resolve),
        heldAnswer("<response>answer to the http turn</response>"),
        heldAnswer("<response>the server's own answer</response>"),
      );
      const token = await s.token();
      const chat = s.spool(["chat", "--continuity", CONTINUITY]);
      chat.type("from the terminal\n");
      await arrived.promise; // the chat's model call is open: it owns the continuity

      const server = await s.serve();
      expect(await postTurn(server.url, token, "from http while the chat runs")).toBe(202);
      // The server ran nothing beside the chat: still the one held call.
      expect(s.model.requests).toHaveLength(1);

      held.resolve();
      await expect.poll(() => completedRuns(s), { timeout: 30_000 }).toBe(2);
      chat.child.stdin.end();
      expect(await chat.exited).toMatchObject({ code: 0 });

      // The chat has gone and released the continuity: the server runs the next turn itself.
      expect(await postTurn(server.url, token, "from http after the chat")).toBe(202);
      await expect.poll(() => completedRuns(s), { timeout: 30_000 }).toBe(3);
      expect(s.model.requests).toHaveLength(3);
      server.process.child.kill("SIGINT");
      expect(await server.process.exited).toMatchObject({ code: 0 });

      expectEachTurnOnce(await s.events(), [
        "from the terminal",
        "from http while the chat runs",
        "from http after the chat",
      ]);
      const replay = await runSpool(["replay", CONTINUITY, "--verify", "--db", s.db], {
        cwd: s.workspace.dir,
        env: s.workspace.env(),
      });
      expect(replay.stdout).toMatch(/^identical: .*1 restart re-enacted/);
    } finally {
      await s.close();
    }
  });

  it("runs what chat and run queue while the server answers a turn", async () => {
    const s = await setup(kind);
    try {
      const held = deferred();
      const arrived = deferred();
      s.model.respond(
        heldAnswer("<response>the server's answer</response>", held.promise, arrived.resolve),
        heldAnswer("<response>one queued answer</response>"),
        heldAnswer("<response>another queued answer</response>"),
      );
      const token = await s.token();
      const server = await s.serve();
      expect(await postTurn(server.url, token, "from http")).toBe(202);
      await arrived.promise; // the server's model call is open: it owns the continuity

      const chat = s.spool(["chat", "--continuity", CONTINUITY]);
      chat.child.stdin.end("queued from chat\n");
      const run = s.spool([
        "run",
        "assistant",
        "--agent",
        "assistant",
        "--continuity",
        CONTINUITY,
        "--prompt",
        "queued from run",
      ]);
      run.child.stdin.end();
      expect(await chat.exited).toMatchObject({ code: 0 });
      expect(chat.plain()).toMatch(
        /another process \(pid \d+ on .+\) is running this continuity; following/,
      );
      await run.shows(/another process \(pid \d+ on .+\) is running this continuity; queued/);
      expect(s.model.requests).toHaveLength(1);

      held.resolve();
      expect(await run.exited).toMatchObject({ code: 0 });
      await expect.poll(() => completedRuns(s), { timeout: 30_000 }).toBe(3);
      expect(s.model.requests).toHaveLength(3);
      server.process.child.kill("SIGINT");
      expect(await server.process.exited).toMatchObject({ code: 0 });
      expectEachTurnOnce(await s.events(), ["from http", "queued from chat", "queued from run"]);
      const replay = await runSpool(["replay", CONTINUITY, "--verify", "--db", s.db], {
        cwd: s.workspace.dir,
        env: s.workspace.env(),
      });
      expect(replay.stdout).toMatch(/^identical: /);
    } finally {
      await s.close();
    }
  });
});
