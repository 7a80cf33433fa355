/**
 * Runs write each thread's `transcript.jsonl` and `knowledge.md` under `.spool/threads/<thread>/`
 * while they run, and the live transcript equals `spool transcript <thread>`'s rebuild byte for
 * byte: after a run, after the next turn on the same thread, after a handoff (the thread, its
 * continuation and the summarizer's thread), and after a run killed with SIGKILL and resumed.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";
import { isEvent, type SpoolEvent } from "../src/spec/index.js";
import { memoryOutput, runSpool } from "./support/cli.js";
import {
  createWorkspace,
  leaseLive,
  readEvents,
  type SpoolProcess,
  spoolOnPipes,
  type Workspace,
} from "./support/cli-e2e.js";

/** A spool process loads the sources through tsx: seconds apiece on a busy machine. */
const PROCESSES_TIMEOUT = 120_000;

let workspace: Workspace;
const running: SpoolProcess[] = [];

beforeEach(() => {
  workspace = createWorkspace("spool-thread-files-");
});
afterEach(() => {
  for (const child of running.splice(0)) child.kill();
  workspace.remove();
});

/** A script of the scripted provider (JSON is YAML), and the environment that plays it. */
function scripted(turns: unknown[], extra: Record<string, string> = {}) {
  const path = join(workspace.home, "script.json");
  writeFileSync(path, JSON.stringify({ turns }));
  return workspace.env({ SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: path, ...extra });
}

const threadsOf = (events: SpoolEvent[]) =>
  events.filter((event) => isEvent(event, "thread.started")).map((event) => event.stream.id);

/** Each thread's live transcript equals the rebuild; returns the threads checked. */
async function expectFilesEqualRebuild(
  continuity: string,
  env: Record<string, string | undefined>,
) {
  const threads = threadsOf(await readEvents(workspace.dir, continuity));
  expect(threads.length).toBeGreaterThan(0);
  for (const thread of threads) {
    const dir = join(workspace.dir, ".spool", "threads", thread);
    const rebuilt = await runSpool(["transcript", thread, "--continuity", continuity], {
      cwd: workspace.dir,
      env,
    });
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(readFileSync(join(dir, "transcript.jsonl"), "utf8"), thread).toBe(rebuilt.stdout);
    expect(readFileSync(join(dir, "knowledge.md"), "utf8")).toContain(`# Thread \`${thread}\``);
  }
  return threads;
}

const ACT = `<thought>Look first.</thought><action type="tool" mode="sync" id="l1">{"name":"fs.list","parameters":{"path":"."}}</action><action type="workflow" mode="sync" id="w1">{"name":"tidy","parameters":{}}</action><action type="agent" mode="sync" id="h1">{"name":"helper","parameters":{}}</action><response final="false">Listed.</response>`;

const HELPER = `# Helper

\`\`\`xml
<directive name="helper" version="1.0.0">
  <metadata>
    <description>Helps once.</description>
    <model tier="fast" />
  </metadata>
</directive>
\`\`\`

Say that you helped.
`;

const TIDY = `name: tidy
description: Lists the workspace, then reads the notes.
steps:
  - id: list
    action: { type: tool, name: fs.list, parameters: { path: "." } }
  - id: read
    depends: [list]
    action: { type: tool, name: fs.read, parameters: { path: notes.md } }
output:
  notes: $steps.read
`;

describe("live thread files", { timeout: PROCESSES_TIMEOUT }, () => {
  it("a run writes transcript.jsonl and knowledge.md equal to the rebuild, and the next turn goes on in them", async () => {
    writeFileSync(join(workspace.dir, "notes.md"), "notes\n");
    mkdirSync(join(workspace.dir, ".ai", "workflows"), { recursive: true });
    writeFileSync(join(workspace.dir, ".ai", "workflows", "tidy.yaml"), TIDY);
    mkdirSync(join(workspace.dir, ".ai", "directives"), { recursive: true });
    writeFileSync(join(workspace.dir, ".ai", "directives", "helper.md"), HELPER);
    // The foreground's first step, the child agent's answer, the foreground's last step.
    const env = scripted([ACT, "<response>Helped.</response>", "<response>All done.</response>"]);
    const spool = (args: string[]) => runSpool(args, { cwd: workspace.dir, env });
    const first = await spool(["run", "assistant", "--continuity", "work", "--prompt", "look"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const threads = await expectFilesEqualRebuild("work", env);
    // The foreground thread and the child thread the agent action ran.
    expect(threads).toHaveLength(2);
    const [thread, child] = threads;
    expect(
      readFileSync(join(workspace.dir, ".spool", "threads", child!, "knowledge.md"), "utf8"),
    ).toContain("Helped.");
    const knowledge = readFileSync(
      join(workspace.dir, ".spool", "threads", thread!, "knowledge.md"),
      "utf8",
    );
    expect(knowledge).toContain("fs.list");
    // The workflow's graph, as its node status table.
    expect(knowledge).toContain("## Workflow tidy (");
    expect(knowledge).toMatch(/\| `list` +\|[^|]*\| ✅ succeeded/);
    expect(knowledge).toMatch(/\| `read` +\|[^|]*\| ✅ succeeded/);
    expect(knowledge).toContain("All done.");

    const second = await spool(["run", "assistant", "--continuity", "work", "--prompt", "again"]);
    expect(second.code).toBe(0);
    // The new process plays the script from its start: the next turn runs a second child.
    const again = await expectFilesEqualRebuild("work", env);
    expect(again.slice(0, 2)).toEqual(threads);
    expect(again).toHaveLength(3);
    const lines = readFileSync(
      join(workspace.dir, ".spool", "threads", thread!, "transcript.jsonl"),
      "utf8",
    );
    expect(lines.match(/"type":"run.started"/g)).toHaveLength(2);
  });

  it("a handoff's threads (the old one, the summarizer's, the continuation) each equal their rebuild", async () => {
    const summary =
      "<response>## Completed Work\nSaid first.\n\n## Pending Work\nNone.\n\n## Next\nAnswer.</response>";
    // The first answer reports a context almost full: the thread hands off after it.
    const env = scripted(
      [
        { text: "<response>first</response>", usage: { inputTokens: 195_000 } },
        summary,
        "<response>second</response>",
      ],
      { SPOOL_MODEL: "claude-3-haiku" },
    );
    const spool = (args: string[]) => runSpool(args, { cwd: workspace.dir, env });
    expect(
      (await spool(["run", "assistant", "--continuity", "long", "--prompt", "one"])).code,
    ).toBe(0);
    expect(
      (await spool(["run", "assistant", "--continuity", "long", "--prompt", "two"])).code,
    ).toBe(0);
    const events = await readEvents(workspace.dir, "long");
    expect(events.some((event) => event.type === "thread.continued")).toBe(true);
    const threads = await expectFilesEqualRebuild("long", env);
    expect(threads.length).toBeGreaterThanOrEqual(2);
    const replay = await spool(["replay", "long", "--verify"]);
    expect(replay.stderr).toBe("");
    expect(replay.code).toBe(0);
  });

  it("a run killed with SIGKILL mid-stream and resumed leaves the file equal to the rebuild", async () => {
    const words = "streaming words ".repeat(40);
    const doomed = spoolOnPipes(["run", "assistant", "--continuity", "crash", "--prompt", "talk"], {
      cwd: workspace.dir,
      env: scripted([`<response final="false">${words}</response>`, "<response>done</response>"], {
        SPOOL_SCRIPT_TOKEN_MS: "30",
        SPOOL_LEASE_TTL_MS: "1000",
      }),
    });
    running.push(doomed);
    doomed.child.stdin.end();
    await doomed.shows("streaming words streaming words streaming");
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toMatchObject({ signal: "SIGKILL" });
    const [thread] = threadsOf(await readEvents(workspace.dir, "crash"));
    const file = join(workspace.dir, ".spool", "threads", thread!, "transcript.jsonl");
    // What the killed process had written: the thread's first lines at least.
    const before = readFileSync(file, "utf8");
    expect(before).toContain('"type":"thread.started"');
    await expect.poll(() => leaseLive(workspace.dir, "crash"), { timeout: 20_000 }).toBe(false);

    // A new process, so a new script: it only finishes.
    const env = scripted(["<response>done</response>"]);
    const resumed = await runSpool(["resume", "crash"], { cwd: workspace.dir, env });
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
    const events = await readEvents(workspace.dir, "crash");
    expect(events.map((event) => event.type)).toContain("recovery.started");
    expect(await expectFilesEqualRebuild("crash", env)).toEqual([thread]);
    const after = readFileSync(file, "utf8");
    expect(after.startsWith(before.slice(0, before.indexOf("\n") + 1))).toBe(true);
    expect(after).toContain('"type":"run.completed"');
  });

  it("spool chat writes them too", async () => {
    const env = scripted(["<response>Hello.</response>", "<response>Again.</response>"]);
    const input = new PassThrough();
    input.end("hi\nonce more\n");
    const code = await main(["chat", "--continuity", "talk"], {
      stdout: memoryOutput(),
      stderr: memoryOutput(),
      env,
      cwd: workspace.dir,
      terminal: { input },
    });
    expect(code).toBe(0);
    const [thread] = await expectFilesEqualRebuild("talk", env);
    const knowledge = readFileSync(
      join(workspace.dir, ".spool", "threads", thread!, "knowledge.md"),
      "utf8",
    );
    expect(knowledge).toContain("Hello.");
    expect(knowledge).toContain("Again.");
  });

  it("a threads directory that cannot be written fails the files, not the run", async () => {
    const env = scripted(["<response>Still here.</response>"]);
    const spool = (args: string[]) => runSpool(args, { cwd: workspace.dir, env });
    // Steps are signed with a key: their checkpoints would wait on the transcript.
    expect((await spool(["keys", "init"])).code).toBe(0);
    writeFileSync(join(workspace.dir, ".spool", "threads"), "not a directory\n");
    const run = await spool(["run", "assistant", "--continuity", "ro", "--prompt", "hi"]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("Still here.");
    expect(run.code).toBe(0);
    const events = await readEvents(workspace.dir, "ro");
    expect(events.map((event) => event.type)).toContain("checkpoint.signed");
    expect(events.filter((event) => event.type === "run.completed")).toHaveLength(1);
  });
});
