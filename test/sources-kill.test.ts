/**
 * SIGKILL of the process that watches the sources, at random points. A child process runs a real
 * runtime on a real SQLite store with two real sources: a file source over a log this test keeps
 * appending numbered lines to and rotating (rename + create, and copytruncate, mid-line too), and
 * a command source whose shell prints numbered lines. The test kills the child after a random
 * number of `source.chunk` appends it printed, right after a delivery turn was appended, in the
 * middle of the model's answer, or while it takes the continuity up, and the next child (started
 * while the last one ran) resumes. After a final clean run to the end:
 *
 * - every line written to the log is in the log once, in order, across rotations and kills (the
 *   first part of a line cut by copytruncate may be missing: it is only in the copy);
 * - the command's output: each run of it (a restart is new output) logged the lines it printed
 *   from its first on, in order, none twice, none skipped;
 * - each source's chunks are numbered 1, 2, … with no gap, and delivered by exactly one delivery
 *   turn each, in order, none skipped; every delivery turn was taken by a run;
 * - the log's hash chain holds and the continuity replays identically.
 *
 * `SPOOL_SOURCE_KILLS` kills (default 100 on CI, 25 otherwise); `SPOOL_SOURCE_KILL_SEED` repeats
 * a run's choices (it is printed, and named in every failure; where the kills land among the
 * child's lines also depends on its timing). The rotations are done only when the reader can
 * follow them (see `RotatingLog`), so the claim "every line once" is the source's, not
 * copytruncate's own window of loss.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEventStore, verifyChain } from "../src/log/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { seededRandom } from "../src/spec/index.js";
import { type BundledScript, bundleScript, runToExit } from "./support/child-process.js";
import { collect, killCount } from "./support/events.js";
import { type ReaderPosition, RotatingLog } from "./support/rotating-log.js";
import { checkSourceKillLog } from "./support/source-kill-checks.js";
import {
  APP_LOG,
  SOURCE_KILL_CONTINUITY,
  STOP_FILE,
  sourceKillAgent,
  sourceKillSources,
} from "./support/source-kill-worker.js";

const KILLS = killCount(process.env.SPOOL_SOURCE_KILLS, process.env.CI ? 100 : 25);
const seed = Number(process.env.SPOOL_SOURCE_KILL_SEED ?? Date.now() % 100_000);
const SENTINEL = "END OF THE LOG";
/** A bound on the lines of one child, so a child that never gets killed fails the test. */
const MAX_LINES_PER_CHILD = 20_000;
/** A child silent this long is stuck (see `runChild`). */
const SILENT_MS = 120_000;

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * When a child is killed: at `ready` (while it takes the continuity up and recovers), or right
 * after its `after`-th line of `kind` (a durable chunk of either source, a durable delivery turn,
 * a streamed model token); `later`: on the parent's next turn of its event loop, by when the
 * child has gone on a little.
 */
interface KillPlan {
  kind: "ready" | "chunk" | "turn" | "tok";
  after: number;
  later: boolean;
}

function pickPlan(random: () => number): KillPlan {
  const pick = (max: number) => 1 + Math.floor(random() * max);
  const later = random() < 0.5;
  const r = random();
  if (r < 0.1) return { kind: "ready", after: 1, later };
  if (r < 0.6) return { kind: "chunk", after: pick(12), later };
  if (r < 0.8) return { kind: "turn", after: pick(3), later };
  return { kind: "tok", after: pick(30), later };
}

/**
 * What the test does to the log as a child's lines come in: appends lines, writes half a line,
 * rotates, each at random, and rotates only when the reader can follow (see `RotatingLog`).
 */
class Writer {
  /** Where the file source durably stands, as the child's lines say (never ahead of the log). */
  position: ReaderPosition | undefined;
  /** The sentinel is written: the log is done. */
  ended = false;

  constructor(
    readonly log: RotatingLog,
    private readonly random: () => number,
  ) {}

  /** Follows a child's fact line: a chunk or rotation of `app-log` moves the durable position. */
  observe(line: string): void {
    const [word, source, what, ino, offset] = line.split(" ");
    if (source !== "app-log" || (word !== "chunk" && word !== "rotated")) return;
    this.position = { ino: ino!, offset: Number(offset) };
    if (word === "rotated" && what === "truncated") this.log.truncationSeen(ino!);
  }

  /**
   * One random move on the log: the next rotation (copytruncate and rename by turns) when the
   * reader can follow it, mid-line half the time; else lines or half a line. A copytruncate
   * needs the reader to have read every line durably, so it is taken often when it can be.
   */
  act(): void {
    const log = this.log;
    const random = this.random;
    const truncateNext = log.rotations.truncated <= log.rotations.renamed;
    const rotate = truncateNext
      ? log.canCopyTruncate(this.position) && random() < 0.5
      : log.canRename(this.position) && random() < 0.1;
    if (rotate) {
      this.#rotate(truncateNext);
      return;
    }
    const r = random();
    if (r < 0.1 && !log.midLine) log.appendPartial(random());
    else if (r < 0.5) log.append(1 + Math.floor(random() * 4));
  }

  /**
   * In the last child's run (no kill): a rotation of a kind the run has not done yet as soon as
   * the reader can follow it, then the sentinel. Until then one line at a time, and only once
   * the reader has read the file to its end: a line for every chunk the reader reports would keep
   * it a line behind for good on a busy machine, and a copytruncate needs it at the end.
   */
  finishing(sentinel: string): void {
    const log = this.log;
    if (this.ended) return;
    if (log.rotations.truncated === 0 && log.canCopyTruncate(this.position)) this.#rotate(true);
    else if (log.rotations.renamed === 0 && log.canRename(this.position)) this.#rotate(false);
    if (log.rotations.truncated > 0 && log.rotations.renamed > 0) {
      log.end(sentinel);
      this.ended = true;
    } else if (!log.behind(this.position)) {
      log.append(1);
    }
  }

  #rotate(truncate: boolean): void {
    const log = this.log;
    log.journal.push(`the reader durably at ${JSON.stringify(this.position)}`);
    if (!log.midLine && this.random() < 0.5) log.appendPartial(this.random());
    if (truncate) log.copyTruncate();
    else log.renameRotate(Math.floor(this.random() * 3));
  }
}

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  lines: number;
  last: string;
  /** Killed by the watchdog: it printed nothing for `SILENT_MS`. */
  stalled: boolean;
}

let scratch: string;
let bundle: BundledScript;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "spool-sources-kill-"));
  bundle = await bundleScript("test/support/source-kill-worker.ts");
});
/** Children not yet exited: a test that times out leaves them to `afterAll`, not to the machine. */
const alive = new Set<ChildProcess>();

afterAll(() => {
  for (const child of alive) child.kill("SIGKILL");
  // SPOOL_SOURCE_KILL_KEEP=1 keeps the store, the log files and the workspace for a look.
  if (!process.env.SPOOL_SOURCE_KILL_KEEP) rmSync(scratch, { recursive: true, force: true });
  bundle.remove();
});

/** Starts a child; it loads, then waits for its arguments on stdin. */
function startChild(): ChildProcess {
  const child = spawn(process.execPath, bundle.args, {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
  });
  alive.add(child);
  child.once("exit", () => alive.delete(child));
  return child;
}

/** Runs a started child once, killing it with SIGKILL as `plan` says (never without a plan). */
async function runChild(
  child: ChildProcess,
  args: string[],
  plan: KillPlan | undefined,
  writer: Writer,
): Promise<ChildRun> {
  let lines = 0;
  let counted = 0;
  let last = "";
  let killed = false;
  const kill = () => {
    killed = true;
    child.kill("SIGKILL");
  };
  child.stdin!.end(args.join("\n"));
  // A child that goes silent is stuck (the counter prints every 20 ms): it is killed, and the
  // run fails with the trace, instead of hanging until the test's timeout says nothing.
  let stalled = false;
  const watchdog = setTimeout(() => {
    stalled = true;
    child.kill("SIGKILL");
  }, SILENT_MS);
  const exit = await runToExit(child, (line) => {
    watchdog.refresh();
    if (line === "loaded") return;
    lines += 1;
    last = line;
    // Lines printed before the child died still tell what is durable.
    writer.observe(line);
    if (killed) return;
    if (lines > MAX_LINES_PER_CHILD) return kill();
    const word = line.split(" ")[0];
    // The service writes on while a child runs; for the last child it ends with the sentinel.
    if (!plan) {
      if (word === "chunk" || word === "rotated" || word === "ready") writer.finishing(SENTINEL);
      return;
    }
    if (word === "chunk") writer.act();
    if (plan.kind === word) {
      counted += 1;
      if (counted === plan.after) {
        if (plan.later) setImmediate(kill);
        else kill();
      }
    }
  }).finally(() => clearTimeout(watchdog));
  return { ...exit, lines, last, stalled };
}

/** What the children of one run did: the kills, and a line per child for a failure's report. */
interface KillRun {
  kills: number;
  trace: string[];
}

/**
 * Starts children until `KILLS` were killed, each killed as a random plan says, the log written
 * and rotated meanwhile, then one that runs to the end (the next child starts while one runs).
 */
async function runChildren(
  random: () => number,
  writer: Writer,
  paths: { db: string; workspace: string },
  fail: (message: string, run: KillRun) => string,
): Promise<KillRun> {
  const run: KillRun = { kills: 0, trace: [] };
  const { log } = writer;
  let next = startChild();
  try {
    for (let spawned = 0; ; spawned++) {
      const finish = run.kills >= KILLS;
      const plan = finish ? undefined : pickPlan(random);
      const mode = finish ? "finish" : spawned === 0 ? "start" : "resume";
      // Between two children the service goes on writing (and may rotate); it stops the counter
      // before the last.
      if (finish) writeFileSync(join(paths.workspace, STOP_FILE), "");
      else writer.act();
      log.journal.push(`child #${spawned} (${mode})`);
      const child = next;
      next = startChild();
      const started = performance.now();
      const args = [paths.db, paths.workspace, mode, SENTINEL];
      const ran = await runChild(child, args, plan, writer);
      const took = performance.now() - started;
      const how = plan
        ? `kill at ${plan.kind} ${plan.after}${plan.later ? " (later)" : ""}`
        : "no kill";
      run.trace.push(
        `#${spawned} ${mode} ${how}: ${ran.signal ?? `exit ${ran.code}`} after ${ran.lines} lines (last "${ran.last}") in ${took.toFixed(0)} ms`,
      );
      expect(
        ran.stalled,
        fail(`child #${spawned} printed nothing for ${SILENT_MS / 1000} s: ${ran.stderr}`, run),
      ).toBe(false);
      if (ran.signal === "SIGKILL") {
        expect(ran.lines, fail("a child ran away", run)).toBeLessThanOrEqual(
          MAX_LINES_PER_CHILD + 1,
        );
        run.kills += 1;
        continue;
      }
      expect(ran.code, fail(`child #${spawned} failed: ${ran.stderr}`, run)).toBe(0);
      expect(finish, fail(`child #${spawned} exited on its own`, run)).toBe(true);
      expect(ran.last).toBe("done");
      return run;
    }
  } finally {
    next.kill("SIGKILL");
  }
}

describe("sources: SIGKILL of the watching process at random points", () => {
  it(`reads every line once across rotations and kills, and delivers every chunk once (seed ${seed}, ${KILLS} kills)`, {
    timeout: 600_000,
  }, async () => {
    console.log(`sources kill test: seed ${seed} (SPOOL_SOURCE_KILL_SEED=${seed} repeats it)`);
    const random = seededRandom(seed);
    const dir = mkdtempSync(join(scratch, "run-"));
    const workspace = join(dir, "workspace");
    mkdirSync(join(workspace, "logs"), { recursive: true });
    const db = join(dir, "store");
    const log = new RotatingLog(join(workspace, APP_LOG), seed);
    log.append(5);
    const fail = (message: string, run: KillRun) =>
      `${message}\nseed ${seed} (SPOOL_SOURCE_KILL_SEED=${seed}); children:\n${run.trace.slice(-40).join("\n")}\nthe writer's last moves:\n${log.journal.slice(-60).join("\n")}\nrun directory: ${dir}`;
    const run = await runChildren(random, new Writer(log, random), { db, workspace }, fail);
    if (process.env.SPOOL_SOURCE_KILL_TRACE) console.log(run.trace.join("\n"));

    const store = await openEventStore({ db });
    try {
      const events = await collect(store.read({ continuity: SOURCE_KILL_CONTINUITY }));
      const found = await checkSourceKillLog(store, events, log.expected);
      expect(found.problems, fail("the log breaks an invariant", run)).toEqual([]);
      const chain = await verifyChain(store);
      expect(chain.mismatch, fail("the hash chain", run)).toBeUndefined();
      const report = await replayContinuity({
        source: store,
        continuity: SOURCE_KILL_CONTINUITY,
        stallMs: 5_000,
        makeRuntime: ({ store: target, world }) =>
          createAgentRuntime({
            store: target,
            provider: world.provider,
            agent: sourceKillAgent(),
            sources: sourceKillSources(workspace),
            world,
          }),
      });
      if (!report.identical) console.error(fail("replay differs", run), report.difference);
      expect(report.difference).toBeUndefined();
      expect(report).toMatchObject({ identical: true, reached: [] });
      // The proof is not vacuous: rotations of both kinds, and the command restarted by the
      // children (mid-line rotations and deliveries cut off by a kill are counted below).
      expect(log.rotations.renamed, fail("no rename rotation", run)).toBeGreaterThan(0);
      expect(log.rotations.truncated, fail("no copytruncate", run)).toBeGreaterThan(0);
      expect(found.counterRuns, fail("the command never restarted", run)).toBeGreaterThan(1);
      console.log(
        `sources kill test: ${run.kills} kills, ${run.trace.length} children, ${events.length} events; ${log.expected.length} lines written, ${log.rotations.renamed} renamed and ${log.rotations.truncated} truncated (${log.rotations.midLine} mid-line); ${found.appChunks} + ${found.counterChunks} chunks in ${found.deliveries} delivery turns (${found.carriedOver} cut off by a kill before their run, run by the next child); ${found.counterRuns} runs of the command; replay compared ${report.compared}`,
      );
    } finally {
      await store.close();
    }
  });
});
