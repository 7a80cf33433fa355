/**
 * One owner per continuity, across real processes, on SQLite and on PostgreSQL: while `spool chat`
 * runs a turn (its model stream held open by a loopback Anthropic server), `spool resume`,
 * another `spool chat` and `spool run --continuity` on the same continuity neither re-run it nor
 * run beside it; the owner runs the turns they queued. Then the owner is SIGKILLed at random
 * points, and another process recovers the run only once its lease has lapsed, with
 * interrupted-action semantics. `SPOOL_KILLS` sets how many kills per store (default 1, each at a random point) and
 * `SPOOL_KILL_SEED` their seed.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SpoolEvent } from "../src/spec/index.js";
import { type BundledScript, bundleScript } from "./support/child-process.js";
import { runSpool } from "./support/cli.js";
import { eventsOf } from "./support/cli-e2e.js";
import { killCount, seededRandom } from "./support/events.js";
import { deferred, heldAnswer } from "./support/held-answers.js";
import { type LeaseProcesses, leaseProcesses } from "./support/lease-processes.js";

const KILLS = killCount(process.env.SPOOL_KILLS, 1);
const seed = Number(process.env.SPOOL_KILL_SEED ?? Date.now() % 100_000);
/** Short, so a dead owner's lease lapses soon; renewed every third of it. */
const TTL_MS = 2_000;
const CONTINUITY = "shared";
const LINE = "one line\n";

/** The model's first step: append a line to the ledger (not idempotent), then go on. */
const WRITE = `<action type="tool" mode="sync" id="w1">${JSON.stringify({
  name: "fs.write",
  parameters: { path: "ledger.txt", content: LINE, mode: "append" },
})}</action><response final="false">I wrote the line.</response>`;

let bundle: BundledScript;
beforeAll(async () => {
  bundle = await bundleScript("src/cli/entry.ts");
});
afterAll(() => bundle?.remove());

interface Setup extends Omit<LeaseProcesses, "events"> {
  events(): Promise<SpoolEvent[]>;
  leaseLive(): Promise<boolean>;
  ledger(): string;
}

async function setup(kind: "sqlite" | "postgres"): Promise<Setup> {
  const processes = await leaseProcesses(kind, bundle, { prefix: "spool-lease-", ttlMs: TTL_MS });
  return {
    ...processes,
    events: () => processes.events(CONTINUITY),
    leaseLive: () =>
      processes.withStore(async (store) => (await store.lease(CONTINUITY))?.live === true),
    ledger: () => {
      const file = join(processes.workspace.dir, "ledger.txt");
      return existsSync(file) ? readFileSync(file, "utf8") : "";
    },
  };
}

/** Every run the log started ended once, and every turn was run once. */
function expectOneCompletionPerRun(events: SpoolEvent[]): void {
  const started = eventsOf(events, "run.started").filter((event) => !event.data.resumed);
  const completed = eventsOf(events, "run.completed").filter(
    (event) => event.data.status !== "continued",
  );
  expect(completed).toHaveLength(started.length);
  const turns = started.map((event) => event.data.turn).filter(Boolean);
  expect(new Set(turns).size).toBe(turns.length);
}

async function replayVerify(setup: Setup): Promise<string> {
  const replay = await runSpool(["replay", CONTINUITY, "--verify", "--db", setup.db], {
    cwd: setup.workspace.dir,
    env: setup.workspace.env(),
  });
  return replay.stdout;
}

describe.each(["sqlite", "postgres"] as const)(
  "one owner per continuity on %s",
  (kind) => {
    it("leaves a live run to its owner: resume refuses, chat and run queue their turns", async () => {
      const s = await setup(kind);
      try {
        const held = deferred();
        const arrived = deferred();
        s.model.respond(
          heldAnswer(WRITE),
          heldAnswer("<response>done writing</response>", held.promise, arrived.resolve),
          heldAnswer("<response>answer to a queued turn</response>"),
        );
        const owner = s.spool(["chat", "--continuity", CONTINUITY]);
        owner.type("write the ledger\n");
        await arrived.promise; // the owner's second model call is open: its run is live

        const resume = s.spool(["resume", CONTINUITY]);
        resume.child.stdin.end();
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

        expect(await resume.exited).toMatchObject({ code: 1 });
        expect(resume.stdout).toMatch(/live in another process \(pid \d+ on .+\); not resumed/);
        expect(await chat.exited).toMatchObject({ code: 0 });
        expect(chat.plain()).toMatch(
          /another process \(pid \d+ on .+\) is running this continuity; following/,
        );
        await run.shows(/another process \(pid \d+ on .+\) is running this continuity; queued/);
        // Nothing ran beside the owner: one model call each, the held one still open.
        expect(s.model.requests).toHaveLength(2);

        held.resolve();
        expect(await run.exited).toMatchObject({ code: 0 });
        // The owner runs both queued turns (in log order; the run's may come first), then exits.
        await expect
          .poll(async () => eventsOf(await s.events(), "run.completed").length, { timeout: 30_000 })
          .toBe(3);
        owner.child.stdin.end();
        expect(await owner.exited).toMatchObject({ code: 0 });

        const events = await s.events();
        expect(s.ledger()).toBe(LINE);
        expect(eventsOf(events, "action.dispatched")).toHaveLength(1);
        expect(
          eventsOf(events, "turn.added")
            .map((event) => event.data.text)
            .sort(),
        ).toEqual(["queued from chat", "queued from run", "write the ledger"]);
        expect(eventsOf(events, "recovery.started")).toHaveLength(0);
        expectOneCompletionPerRun(events);
        expect(eventsOf(events, "run.completed").map((event) => event.data.status)).toEqual([
          "completed",
          "completed",
          "completed",
        ]);
        // Two queued turns, one request each: four in all.
        expect(s.model.requests).toHaveLength(4);
        expect(await s.leaseLive()).toBe(false);
        expect(await replayVerify(s)).toMatch(/^identical: /);
      } finally {
        await s.close();
      }
    });

    const random = seededRandom(seed + (kind === "postgres" ? 1 : 0));
    const points = ["first call", "tool started", "tool done", "second call"] as const;
    const kills = Array.from({ length: KILLS }, (_, i) => ({
      i,
      point: points[Math.floor(random() * points.length)]!,
    }));

    it.each(kills)(
      `takes a dead owner's run over only after its lease lapses, with interrupted actions (seed ${seed}, kill $i at $point)`,
      async ({ point }) => {
        const s = await setup(kind);
        try {
          const firstArrived = deferred();
          const secondArrived = deferred();
          // The owner's calls are held until it is dead; a later process's are answered at once.
          const killed = deferred();
          s.model.respond(
            heldAnswer(
              WRITE,
              point === "first call" ? killed.promise : undefined,
              firstArrived.resolve,
            ),
            heldAnswer("<response>done writing</response>", killed.promise, secondArrived.resolve),
          );
          const owner = s.spool(["chat", "--continuity", CONTINUITY]);
          owner.type("write the ledger\n");
          if (point === "first call") await firstArrived.promise;
          else if (point === "tool started") await owner.shows("fs.write");
          else if (point === "tool done") await owner.shows("✓ fs.write");
          else await secondArrived.promise;
          owner.child.kill("SIGKILL");
          expect(await owner.exited).toMatchObject({ signal: "SIGKILL" });
          killed.resolve();

          // The dead owner's lease is still live for a while: no process may recover the run yet.
          expect(await s.leaseLive()).toBe(true);
          const early = s.spool(["resume", CONTINUITY]);
          early.child.stdin.end();
          const earlyExit = await early.exited;
          const tookOver = eventsOf(await s.events(), "recovery.started").length > 0;
          if (!tookOver) {
            expect(earlyExit.code).toBe(1);
            expect(early.stdout).toMatch(/live in another process \(pid \d+ on .+\); not resumed/);
            // Once it lapses, another process takes over.
            await expect.poll(() => s.leaseLive(), { timeout: 20_000, interval: 100 }).toBe(false);
            const resume = s.spool(["resume", CONTINUITY]);
            resume.child.stdin.end();
            expect(await resume.exited).toMatchObject({ code: 0 });
            expect(resume.stdout).toContain(`${CONTINUITY}: 1 run resumed`);
          } else {
            // The lease lapsed while the early resume started: it recovered the run, as it may.
            expect(earlyExit.code).toBe(0);
          }
          const events = await s.events();
          expect(eventsOf(events, "recovery.started")).toHaveLength(1);

          // At most once: fs.write is not idempotent, so an intent without a result is reported
          // as interrupted and never run again.
          expect(["", LINE]).toContain(s.ledger());
          if (point === "tool done" || point === "second call") expect(s.ledger()).toBe(LINE);
          const dispatched = eventsOf(events, "action.dispatched");
          expect(dispatched.length).toBeLessThanOrEqual(1);
          const ends = events.filter((event) =>
            ["action.succeeded", "action.interrupted", "action.failed"].includes(event.type),
          );
          expect(ends).toHaveLength(dispatched.length);
          if (s.ledger() === "" && dispatched.length === 1) {
            expect(ends[0]!.type).toBe("action.interrupted");
          }
          expectOneCompletionPerRun(events);
          expect(eventsOf(events, "run.completed").at(-1)?.data.status).toBe("completed");
          expect(await replayVerify(s)).toMatch(/^identical: .*1 restart re-enacted/);
        } finally {
          await s.close();
        }
      },
    );
  },
  120_000,
);
