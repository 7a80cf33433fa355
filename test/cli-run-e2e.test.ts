/**
 * `spool run`, `spool resume` and `spool replay --verify` end to end: real processes on pipes, in
 * a fresh workspace with no provider key; one of them killed with SIGKILL mid-run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";
import { isEvent, prepareEvent, type SpoolEvent } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import {
  createWorkspace,
  eventsOf,
  leaseLive,
  readEvents,
  runSpoolProcess,
  type SpoolProcess,
  spoolOnPipes,
  type Workspace,
} from "./support/cli-e2e.js";

/** Each spool process loads the sources through tsx: seconds apiece on a busy machine. */
const PROCESSES_TIMEOUT = 120_000;
const root = fileURLToPath(new URL("..", import.meta.url));

/** A script file of the scripted provider, written as JSON (which is YAML). */
function writeScript(path: string, turns: unknown[]): string {
  writeFileSync(path, JSON.stringify({ turns }, null, 2));
  return path;
}

const statuses = (events: SpoolEvent[]) =>
  eventsOf(events, "run.completed").map((event) => event.data.status);

describe("spool run, resume and replay as processes", { timeout: PROCESSES_TIMEOUT }, () => {
  let workspace: Workspace;
  const running: SpoolProcess[] = [];

  const spool = (args: string[], env: Record<string, string> = {}) =>
    runSpoolProcess(args, { cwd: workspace.dir, env: workspace.env(env) });
  /** `spool` in this process (cheaper), for what needs no process of its own. */
  const inProcess = (args: string[], env: Record<string, string> = {}) =>
    runSpool(args, { cwd: workspace.dir, env: workspace.env(env) });

  beforeEach(() => {
    workspace = createWorkspace("spool-run-e2e-");
  });

  afterEach(() => {
    for (const child of running.splice(0)) child.kill();
    workspace.remove();
  });

  it("runs the demo without a key, as text and as JSON events, and exits with the run's status", async () => {
    const [text, json, missing, badInput] = await Promise.all([
      spool(["run", "demo", "--continuity", "as-text"]),
      spool(["run", "demo", "--json", "--continuity", "as-json"]),
      // Usage errors end before any agent runs: in-process, where main's code is the exit code.
      inProcess(["run", "nope"]),
      inProcess(["run", "demo", "--input", "nope=1"]),
    ]);

    expect(text.stderr).toBe("");
    expect(text.stdout.split("\n")[0]).toMatch(/^No model provider is configured/);
    expect(text.stdout).toMatch(/✓ fs\.search \d/);
    expect(text.stdout).toContain("`spool replay --verify` re-derives it exactly.");
    expect(text.stdout).toMatch(/Σ 2 steps · 3 actions/);
    expect(text.stdout).not.toContain("\x1b[");
    expect(text.code).toBe(0);

    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const lines = json.stdout.trimEnd().split("\n");
    const events = lines.map((line) => JSON.parse(line) as SpoolEvent);
    const defaults = { now: () => new Date().toISOString(), newId: () => "unused" };
    for (const [index, event] of events.entries()) {
      // Seqs are the store's: the other runs of this test share it.
      expect(event.continuity).toBe("as-json");
      if (index > 0) expect(event.seq).toBeGreaterThan(events[index - 1]!.seq);
      expect(event.hash).toMatch(/^[0-9a-f]{64}$/);
      const { seq: _seq, hash: _hash, criticality: _criticality, ...rest } = event;
      expect(() => prepareEvent(rest, defaults), `line ${index + 1}`).not.toThrow();
    }
    expect(events.map((event) => event.type)).toContain("action.succeeded");
    const last = events.at(-1)!;
    expect(last.type).toBe("run.completed");
    expect(last.data).toMatchObject({ status: "completed", steps: 2 });
    const started = events.find((event) => event.type === "run.started")!;
    expect(last.stream).toEqual(started.stream);
    // What was printed is what the log holds, and then the runtime's close.
    expect(await readEvents(workspace.dir, "as-json")).toEqual([
      ...events,
      expect.objectContaining({
        type: "runtime.closed",
        data: { reason: "the runtime closed", tasks: [] },
      }),
    ]);

    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(
      /no directive "nope" in \.ai\/directives, ~\/\.ai\/directives, /,
    );
    expect(missing.stderr).toContain(join(root, "builtin", "directives"));
    expect(missing.stderr).toContain("Create .ai/directives/nope.md");

    expect(badInput.code).toBe(2);
    expect(badInput.stdout).toBe("");
    expect(badInput.stderr).toContain('unknown input "nope" (directive "demo" takes topic)');
  });

  it("exits 4 naming the limit when a directive runs out of turns", async () => {
    mkdirSync(join(workspace.dir, ".ai", "directives"), { recursive: true });
    writeFileSync(
      join(workspace.dir, ".ai", "directives", "looper.md"),
      `# Looper

\`\`\`xml
<directive name="looper" version="1.0.0">
  <metadata>
    <description>Never finishes: it stops only at its turn limit.</description>
    <category>test</category>
    <author>test</author>
    <model tier="fast" />
    <limits max_turns="2" />
  </metadata>
</directive>
\`\`\`

Say "again" and never finish.
`,
    );
    const script = writeScript(join(workspace.home, "again.yaml"), [
      '<response final="false">again</response>',
    ]);
    const run = await spool(["run", "looper", "--continuity", "loop"], {
      SPOOL_PROVIDER: "scripted",
      SPOOL_SCRIPT: script,
    });
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/⚠ limit max_turns reached: 2 of 2\n■ stopped by a limit\n/);
    expect(run.stdout.match(/^again$/gm)).toHaveLength(2);
    expect(run.code).toBe(4);
    expect(statuses(await readEvents(workspace.dir, "loop"))).toEqual(["limit"]);
  });

  // Killed once the action shows (its intent may not be durable yet, the tool may not have run)
  // and once it shows done (the file is written; its result may not be durable yet).
  it.each([
    ["as the action starts", "→ tool fs.write"],
    ["right after the action succeeded", "✓ fs.write"],
  ])("resumes a run killed with SIGKILL %s, never writing twice", async (_when, line) => {
    const content = "written once\n";
    const action = { name: "fs.write", parameters: { path: "out.txt", content, mode: "append" } };
    const script = writeScript(join(workspace.home, "write.yaml"), [
      `<thought>Write the file first.</thought><action type="tool" mode="sync" id="w1">${JSON.stringify(action)}</action><response final="false">${"I wrote the file and will now check that it holds what it should. ".repeat(4)}</response>`,
      "<response>done</response>",
    ]);
    const run = ["run", "assistant", "--agent", "assistant", "--continuity", "crash"];
    const doomed = spoolOnPipes([...run, "--prompt", "write the file"], {
      cwd: workspace.dir,
      env: workspace.env({
        SPOOL_PROVIDER: "scripted",
        SPOOL_SCRIPT: script,
        SPOOL_SCRIPT_TOKEN_MS: "30",
        SPOOL_LEASE_TTL_MS: "1000",
      }),
    });
    running.push(doomed);
    doomed.child.stdin.end();
    await doomed.shows(line);
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toMatchObject({ code: null, signal: "SIGKILL" });
    expect(statuses(await readEvents(workspace.dir, "crash"))).toEqual([]);
    // The dead process's lease on the continuity must lapse before another may recover it.
    await expect.poll(() => leaseLive(workspace.dir, "crash"), { timeout: 20_000 }).toBe(false);

    // The model after the restart (a new process, so a new script) only finishes.
    const after = writeScript(join(workspace.home, "done.yaml"), ["<response>done</response>"]);
    const resumed = await spool(["resume"], { SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: after });
    expect(resumed.stderr).toBe("");
    expect(resumed.stdout).toContain("crash: 1 run resumed");
    expect(resumed.code).toBe(0);

    const events = await readEvents(workspace.dir, "crash");
    const types = events.map((event) => event.type);
    const recovery = types.indexOf("recovery.started");
    expect(recovery).toBeGreaterThan(0);
    expect(statuses(events)).toEqual(["completed"]);
    expect(types.indexOf("run.completed")).toBeGreaterThan(recovery);
    // fs.write is not idempotent: a durable intent without a result is reported, never re-run.
    expect(types.filter((type) => type === "action.dispatched").length).toBeLessThanOrEqual(1);
    expect(types.slice(recovery)).not.toContain("action.started");
    if (types.includes("action.dispatched")) {
      const ends = types.filter(
        (type) => type === "action.succeeded" || type === "action.interrupted",
      );
      expect(ends).toHaveLength(1);
    }
    const file = join(workspace.dir, "out.txt");
    if (line.startsWith("✓")) expect(existsSync(file)).toBe(true);
    if (existsSync(file)) expect(readFileSync(file, "utf8")).toBe(content);

    const replay = await inProcess(["replay", "crash", "--verify"]);
    expect(replay.stdout).toMatch(/^identical: .*, 1 restart re-enacted/);
    expect(replay.code).toBe(0);
  });

  // Regression: replay (and resume) assembled the directive alone, without the run's manifest,
  // so the tool catalogue in the prompt differed and the first context.compiled did not match.
  it("replays a run of an agent manifest with that manifest's tools", async () => {
    const script = writeScript(join(workspace.home, "done.yaml"), ["<response>done</response>"]);
    const args = ["run", "assistant", "--agent", "assistant", "--continuity", "agent"];
    const run = await inProcess([...args, "--prompt", "hi"], {
      SPOOL_PROVIDER: "scripted",
      SPOOL_SCRIPT: script,
    });
    expect(run.code).toBe(0);
    const replay = await inProcess(["replay", "agent", "--verify"]);
    expect(replay.stdout).toMatch(/^identical: /);
    expect(replay.code).toBe(0);
  });

  it("catches an edited action parameter in replay --verify, naming its seq", async () => {
    const original = await inProcess(["run", "demo", "--continuity", "demo"]);
    expect(original.code).toBe(0);
    const events = await readEvents(workspace.dir, "demo");

    const copyDir = join(workspace.home, "edited");
    const copy = await openEventStore({ db: copyDir });
    let changed: SpoolEvent | undefined;
    try {
      for (const event of events) {
        const edit =
          !changed && isEvent(event, "action.dispatched") && event.data.name === "fs.list"
            ? { ...event, data: { ...event.data, parameters: { path: "elsewhere" } } }
            : undefined;
        const { seq: _seq, hash: _hash, criticality: _criticality, ...rest } = edit ?? event;
        const appended = await copy.append(rest);
        if (edit) changed = appended;
      }
    } finally {
      await copy.close();
    }
    expect(changed).toBeDefined();

    const control = await inProcess(["replay", "demo", "--verify"]);
    expect(control.stdout).toMatch(/^identical/);

    const replay = await spool(["replay", "demo", "--verify", "--db", copyDir]);
    expect(replay.stdout).toMatch(/^differs: /);
    expect(replay.stdout).toContain(`logged:  seq ${changed!.seq} action.dispatched`);
    expect(replay.stdout).toContain('"parameters":{"path":"elsewhere"}');
    expect(replay.stdout).toMatch(/derived: action\.dispatched .*"parameters":\{"path":"\."\}/);
    expect(replay.code).toBe(1);
  });
});
