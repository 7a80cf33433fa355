import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Durability, type EventStore, openEventStore, verifyChain } from "../src/log/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { type EventData, prepareEvent, type SpoolEvent } from "../src/spec/index.js";
import { type BundledScript, bundleScript, runToExit } from "./support/child-process.js";
import { collect, killCount, seededRandom } from "./support/events.js";
import {
  KILL_CONTINUITY,
  type KillEffects,
  killAgent,
  LEDGER_FILE,
  turnScript,
  turnText,
} from "./support/runtime-kill-worker.js";

/**
 * The most kills (`SPOOL_RUNTIME_KILLS`, default 36); after them workers resume unkilled until the
 * work is done. The plans spread them over the run, and five in six must land before the work is
 * done (30 of the default 36).
 */
const KILLS = killCount(process.env.SPOOL_RUNTIME_KILLS, 36);
const MIN_KILLS = Math.ceil((KILLS * 5) / 6);
const TURNS = 5;
/** Model calls a run without crashes makes. */
const TOTAL_STEPS = Array.from({ length: TURNS }, (_, turn) => turnScript(turn + 1).length).reduce(
  (sum, steps) => sum + steps,
);
/** A bound on spawns: recovery that never gets anywhere fails the test rather than hanging it. */
const MAX_SPAWNS = KILLS + 84;

const root = fileURLToPath(new URL("..", import.meta.url));
const seed = Number(process.env.SPOOL_KILL_SEED ?? Date.now() % 100_000);
/**
 * The workers' durability: `SPOOL_DURABILITY` when set, else by the seed's parity, so runs cover
 * both: `strict`, and `fast`, where a step's model request goes out while its start is written.
 */
const durability: Durability =
  process.env.SPOOL_DURABILITY === "strict" || process.env.SPOOL_DURABILITY === "fast"
    ? process.env.SPOOL_DURABILITY
    : seed % 2 === 0
      ? "strict"
      : "fast";

/**
 * Where and when a worker is killed: once it is ready (`call` 0: during recovery) or once its
 * `call`-th model call has started, right after its `after`-th stdout line of a kind from then on
 * (any line, an acknowledged append, a tool starting, a side effect done, a streamed model token),
 * or `after` ms later. `later`: the kill waits for the parent's next turn of its event loop, by
 * when the worker has gone on a little.
 */
interface KillPlan {
  call: number;
  kind: "line" | "ack" | "act" | "did" | "tok" | "delay";
  after: number;
  later: boolean;
}

/**
 * A plan that spreads the kills over the whole run: a worker gets about as many model calls as
 * the steps left divided by the kills left, and fewer than the steps left, so the work is
 * seldom done before the last kill.
 */
function pickPlan(random: () => number, stepsLeft: number, killsLeft: number): KillPlan {
  const pick = (max: number) => 1 + Math.floor(random() * max);
  const calls = Math.max(1, Math.min(stepsLeft - 1, Math.ceil((2 * stepsLeft) / killsLeft)));
  const call = random() < 0.1 ? 0 : pick(calls);
  const later = random() < 0.5;
  const r = random();
  if (r < 0.2) return { call, later, kind: "line", after: pick(40) };
  if (r < 0.3) return { call, later, kind: "ack", after: pick(15) };
  if (r < 0.5) return { call, later, kind: "act", after: pick(3) };
  if (r < 0.6) return { call, later, kind: "did", after: pick(3) };
  if (r < 0.8) return { call, later, kind: "tok", after: pick(20) };
  return { call, later, kind: "delay", after: Math.floor(random() * 60) };
}

interface WorkerRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  lines: number;
  last: string;
  /** id → type and seq of every event whose append the worker saw resolve. */
  acks: Map<string, { type: string; seq: number }>;
}

let scratch: string;
let bundle: BundledScript;
let command: string[];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "spool-runtime-kill-"));
  // tsx takes 1-2 s to start a process on a small machine, and the test starts dozens.
  bundle = await bundleScript("test/support/runtime-kill-worker.ts");
  command = bundle.args;
});
/** Workers not yet exited: a test that times out leaves them to `afterAll`, not to the machine. */
const alive = new Set<ChildProcess>();

afterAll(() => {
  for (const child of alive) child.kill("SIGKILL");
  // SPOOL_KILL_KEEP=1 keeps the store and the ledger of the run for a look after a failure.
  if (!process.env.SPOOL_KILL_KEEP) rmSync(scratch, { recursive: true, force: true });
  bundle.remove();
});

/** Starts a worker; it loads and then waits for its arguments on stdin. */
function startWorker(): ChildProcess {
  const child = spawn(process.execPath, command, {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, SPOOL_DURABILITY: durability },
  });
  alive.add(child);
  child.once("exit", () => alive.delete(child));
  return child;
}

/** Runs a started worker once, killing it with SIGKILL as `plan` says (never without a plan). */
async function runWorker(
  child: ChildProcess,
  args: string[],
  plan: KillPlan | undefined,
): Promise<WorkerRun> {
  const acks: WorkerRun["acks"] = new Map();
  let lines = 0;
  let calls = 0;
  let armed = false;
  let counted = 0;
  let last = "";
  let timer: NodeJS.Timeout | undefined;
  const kill = () => child.kill("SIGKILL");
  child.stdin!.end(args.join("\n"));
  const exit = await runToExit(child, (line) => {
    if (line === "loaded") return;
    lines += 1;
    last = line;
    const [word, id, type, seq] = line.split(" ");
    // Acks that arrive after the kill was sent were printed before the process died: they count.
    if (word === "ack") acks.set(id!, { type: type!, seq: Number(seq) });
    if (!plan) return;
    if (word === "model") calls += 1;
    if (!armed) {
      armed = plan.call === 0 ? word === "ready" : calls === plan.call;
      if (armed && plan.kind === "delay") timer = setTimeout(kill, plan.after);
      return;
    }
    if (plan.kind === "line" || plan.kind === word) {
      counted += 1;
      if (counted === plan.after) {
        if (plan.later) setImmediate(kill);
        else kill();
      }
    }
  });
  clearTimeout(timer);
  return { ...exit, lines, last, acks };
}

/**
 * The log after a crash: seq without holes and every acknowledged event in it, as acknowledged.
 * With `full`, also nothing partial (each event passes its catalog schema again) and the hash
 * chain intact (one more read: done once at the end, the log is checked after every kill).
 */
async function checkLog(
  store: EventStore,
  acked: WorkerRun["acks"],
  full = false,
): Promise<SpoolEvent[]> {
  const all = await collect(store.read());
  expect(all.map((event) => event.seq)).toEqual(all.map((_, index) => index + 1));
  const byId = new Map(all.map((event) => [event.id, event]));
  for (const [id, ack] of acked) {
    const event = byId.get(id);
    expect(event, `acknowledged ${ack.type} ${id} (seq ${ack.seq}) is missing`).toBeDefined();
    expect({ type: event!.type, seq: event!.seq }).toEqual(ack);
  }
  if (!full) return all;
  for (const event of all) {
    const { seq: _seq, hash: _hash, criticality: _criticality, ...input } = event;
    expect(() => prepareEvent(input, { now: () => event.ts, newId: () => event.id })).not.toThrow();
  }
  const chain = await verifyChain(store);
  expect(chain.mismatch).toBeUndefined();
  expect(chain).toMatchObject({ ok: true, events: all.length });
  return all;
}

interface LedgerLine {
  step: string;
  action: string;
  value: string;
}

/**
 * Side effects at most once: one ledger line per (step, action) at most; each line's intent was
 * logged (`action.dispatched` of `ledger.append` in that step) before it was written; each
 * `ledger.append` the log says succeeded has its line; none is ever re-run.
 */
function checkLedger(dir: string, events: readonly SpoolEvent[]): LedgerLine[] {
  const path = join(dir, LEDGER_FILE);
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  expect(text === "" || text.endsWith("\n"), "a ledger line was cut short").toBe(true);
  const lines = text
    .split("\n")
    .filter((line) => line !== "")
    .map((line): LedgerLine => {
      const [step, action, value, ...rest] = line.split("|");
      expect(rest, `malformed ledger line ${line}`).toEqual([]);
      return { step: step!, action: action!, value: value! };
    });
  const count = new Map<string, number>();
  for (const line of lines) {
    const key = `${line.step}#${line.action}`;
    count.set(key, (count.get(key) ?? 0) + 1);
  }
  const twice = [...count].filter(([, n]) => n > 1).map(([key]) => key);
  expect(twice, "ledger.append ran more than once").toEqual([]);

  const dispatched = new Map<string, EventData<"action.dispatched">>();
  const succeeded: string[] = [];
  for (const event of events) {
    const data = event.data as { action_id?: string; name?: string; rerun?: boolean };
    const key = `${event.stream.id}#${data.action_id}`;
    if (event.type === "action.dispatched") {
      dispatched.set(key, event.data as EventData<"action.dispatched">);
    }
    if (event.type === "action.succeeded" && dispatched.get(key)?.name === "ledger.append") {
      succeeded.push(key);
    }
    if (event.type === "action.interrupted" && data.name === "ledger.append") {
      expect(data.rerun, `${key} would be re-run`).toBe(false);
    }
    if (event.type === "action.started" && dispatched.get(key)?.name === "ledger.append") {
      expect((event.data as { attempt: number }).attempt, `${key} started again`).toBe(1);
    }
  }
  for (const line of lines) {
    const intent = dispatched.get(`${line.step}#${line.action}`);
    expect(intent?.name, `ledger line ${line.step}|${line.action} has no logged intent`).toBe(
      "ledger.append",
    );
    expect(intent?.parameters).toEqual({ value: line.value });
  }
  for (const key of succeeded) expect(count.get(key), `${key} succeeded`).toBe(1);
  return lines;
}

/**
 * `$variables` follow the log across steps and restarts: each turn's last step stores `$y.key`,
 * which must be the key of the newest `output_key: "y"` action the log shows succeeded before
 * (a re-run by recovery included).
 */
function checkVariables(events: readonly SpoolEvent[]): number {
  const keys = new Map<string, string>();
  let y: string | undefined;
  let checked = 0;
  for (const event of events) {
    const data = event.data as { action_id?: string; output?: { key?: string } };
    const key = `${event.stream.id}#${data.action_id}`;
    if (event.type === "action.dispatched") {
      const dispatched = event.data as EventData<"action.dispatched">;
      if (dispatched.output_key === "y") keys.set(key, "y");
      if (/^t\d+f$/.test(dispatched.action_id)) {
        expect(dispatched.parameters, `$y.key in ${key} (seq ${event.seq})`).toEqual({
          key: dispatched.parameters.key,
          value: y ?? "$y.key",
        });
        checked += 1;
      }
    }
    if (event.type === "action.succeeded" && keys.has(key)) y = data.output?.key;
  }
  return checked;
}

/** Per turn, the last run that worked on it (resumed runs carry on the turn they took over). */
function turnOutcomes(events: readonly SpoolEvent[]): Map<string, string> {
  const outcome = new Map<string, string>();
  let current: string | undefined;
  for (const event of events) {
    if (event.stream.kind !== "thread") continue;
    if (event.type === "run.started") {
      const data = event.data as EventData<"run.started">;
      if (data.turn !== undefined) current = data.turn;
      if (current !== undefined) outcome.set(current, "open");
    }
    if (event.type === "run.completed" && current !== undefined) {
      outcome.set(current, (event.data as EventData<"run.completed">).status);
    }
  }
  return outcome;
}

/** Tools the replay must never call: replay takes every result from the log. */
const replayEffects: KillEffects = {
  ledger: () => Promise.reject(new Error("replay called ledger.append")),
  cache: () => Promise.reject(new Error("replay called cache.put")),
};

describe("runtime: SIGKILL at random points of a run with side effects", () => {
  it(`keeps side effects at most once, loses nothing committed and replays identically (seed ${seed}, ${KILLS} kills, ${durability})`, {
    // About 40 s on an idle 2-core machine for the default kills (the seed's log line says how
    // many kills and spawns); the bound leaves room for a machine busy with other work.
    timeout: 120_000 + KILLS * 5_000,
  }, async () => {
    console.log(
      `runtime kill test: seed ${seed}, ${durability} (SPOOL_KILL_SEED=${seed} repeats it)`,
    );
    const random = seededRandom(seed);
    const dir = mkdtempSync(join(scratch, "run-"));
    const db = join(dir, "store");
    const acked: WorkerRun["acks"] = new Map();
    const trace: string[] = [];
    const fail = (message: string) =>
      `${message}\nseed ${seed}; spawns:\n${trace.join("\n")}\nledger: ${join(dir, LEDGER_FILE)}`;
    let kills = 0;
    let finished = false;
    let stepsLeft = TOTAL_STEPS;
    // The next worker loads while the last one runs.
    let next = startWorker();
    try {
      for (let spawned = 0; !finished; spawned++) {
        expect(spawned, fail("the work never finished")).toBeLessThan(MAX_SPAWNS);
        const plan = kills < KILLS ? pickPlan(random, stepsLeft, KILLS - kills) : undefined;
        const mode = spawned === 0 ? "start" : "resume";
        const t0 = performance.now();
        const child = next;
        next = startWorker();
        const run = await runWorker(child, [db, dir, mode, String(TURNS)], plan);
        const t1 = performance.now();
        for (const [id, ack] of run.acks) acked.set(id, ack);
        const ended = run.signal ?? `exit ${run.code}`;
        trace.push(
          `#${spawned} ${mode} ${plan ? `kill in call ${plan.call} at ${plan.kind} ${plan.after}${plan.later ? " (later)" : ""}` : "no kill"}: ${ended} after ${run.lines} lines (last "${run.last}") ${(t1 - t0).toFixed(0)}ms`,
        );
        if (run.signal === "SIGKILL") kills += 1;
        else {
          expect(run.code, fail(run.stderr)).toBe(0);
          expect(run.last).toBe("done");
          finished = true;
        }
        const store = await openEventStore({ db, durability });
        try {
          const events = await checkLog(store, acked);
          checkLedger(dir, events);
          checkVariables(events);
          const answered = events.filter((event) => event.type === "message.completed").length;
          stepsLeft = Math.max(1, TOTAL_STEPS - answered);
        } catch (error) {
          console.error(fail(`after spawn #${spawned}`));
          throw error;
        } finally {
          await store.close();
        }
        trace[trace.length - 1] += ` check ${(performance.now() - t1).toFixed(0)}ms`;
      }
    } finally {
      next.kill("SIGKILL");
    }
    if (process.env.SPOOL_KILL_TRACE) console.log(trace.join("\n"));
    expect(kills, fail("too few kills before the work finished")).toBeGreaterThanOrEqual(MIN_KILLS);

    const store = await openEventStore({ db, durability });
    try {
      const events = await checkLog(store, acked, true);
      const ledger = checkLedger(dir, events);
      expect(checkVariables(events)).toBeGreaterThanOrEqual(TURNS);
      const mine = events.filter((event) => event.continuity === KILL_CONTINUITY);
      expect(mine).toHaveLength(events.length);

      // Every turn was taken once and ended with a final response.
      const turns = mine.filter((event) => event.type === "turn.added");
      expect(turns.map((event) => (event.data as { text: string }).text)).toEqual(
        Array.from({ length: TURNS }, (_, index) => turnText(index + 1)),
      );
      const outcomes = turnOutcomes(mine);
      expect(
        turns.map((event) => outcomes.get(event.id)),
        fail("turn outcomes"),
      ).toEqual(turns.map(() => "completed"));
      // The work itself got done: every turn's final step ran, and a good share of the writes.
      expect(ledger.length).toBeGreaterThan(0);

      const recoveries = mine.filter((event) => event.type === "recovery.started").length;
      const report = await replayContinuity({
        source: store,
        continuity: KILL_CONTINUITY,
        stallMs: 3000,
        makeRuntime: ({ store: target, world }) =>
          createAgentRuntime({
            store: target,
            provider: world.provider,
            agent: killAgent(replayEffects),
            world,
          }),
      });
      if (!report.identical) console.error(fail("replay differs"), report.difference);
      expect(report.difference).toBeUndefined();
      // In the closed world: every crash re-enacted, nothing outside reached.
      expect(report).toMatchObject({ identical: true, recoveries, reached: [] });
      console.log(
        `runtime kill test: ${kills} kills, ${trace.length} spawns, ${events.length} events, ${recoveries} recoveries, ${ledger.length} ledger lines; replay compared ${report.compared}, took ${report.taken}`,
      );
    } finally {
      await store.close();
    }
  });
});
