/**
 * Inputs of a directive through the CLI: `spool chat --directive X --input k=v` fills `$k` in
 * the instructions the model is given, as `spool run` does; a required input that is missing is
 * refused by both with the same error; the inputs are recorded, so `spool replay --verify`
 * compiles the same system prompt. A chat on a continuity `spool run` started goes on with its
 * directive and tools, and replays identical. Commands run in-process through `main`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";
import { openEventStore } from "../src/log/index.js";
import { isEvent } from "../src/spec/index.js";
import { memoryOutput, runSpool } from "./support/cli.js";
import { createWorkspace, type Workspace } from "./support/cli-e2e.js";

const BRIEF = `# Brief

\`\`\`xml
<directive name="brief" version="1.0.0">
  <metadata>
    <description>Writes a brief on a topic.</description>
    <model tier="fast" />
  </metadata>
  <inputs>
    <input name="topic" type="string" required="true">What the brief is about</input>
    <input name="words" type="integer" default="50">How long it may be</input>
  </inputs>
</directive>
\`\`\`

Write a brief about $topic in at most $words words. Mention $topics only once.
`;

let workspace: Workspace;
let env: Record<string, string | undefined>;

beforeEach(() => {
  workspace = createWorkspace("spool-inputs-");
  mkdirSync(join(workspace.dir, ".ai", "directives", "desk"), { recursive: true });
  writeFileSync(join(workspace.dir, ".ai", "directives", "desk", "brief.md"), BRIEF);
  const script = join(workspace.home, "brief.json");
  writeFileSync(script, JSON.stringify({ turns: ["<response>A brief.</response>"] }));
  env = workspace.env({ SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: script });
});
afterEach(() => workspace.remove());

/** `spool chat args` in-process, reading `lines` as the turns of a pipe, then its end. */
async function chat(args: string[], lines: string[]) {
  const input = new PassThrough();
  input.end(lines.map((line) => `${line}\n`).join(""));
  const stdout = memoryOutput();
  const stderr = memoryOutput();
  const code = await main(["chat", ...args], {
    stdout,
    stderr,
    env,
    cwd: workspace.dir,
    terminal: { input },
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const spool = (args: string[]) => runSpool(args, { cwd: workspace.dir, env });

/** The system prompts the continuity's model calls were given, in order. */
async function systemPrompts(continuity: string): Promise<string[]> {
  const store = await openEventStore({ db: join(workspace.dir, ".spool") });
  try {
    const prompts: string[] = [];
    for await (const event of store.read({ continuity, types: ["context.compiled"] })) {
      if (!isEvent(event, "context.compiled")) continue;
      const hash = event.data.system;
      if (hash !== undefined) prompts.push((await store.artifacts.get(hash)).toString("utf8"));
    }
    return prompts;
  } finally {
    await store.close();
  }
}

describe("directive inputs on the command line", () => {
  it("spool chat --input fills $k in the instructions, typed and defaulted, as spool run does", async () => {
    const chatted = await chat(
      ["--directive", "desk/brief", "--input", "topic=tide pools", "--continuity", "talk"],
      ["go"],
    );
    expect(chatted.stderr).toBe("");
    expect(chatted.code).toBe(0);
    expect(chatted.stdout).toContain("A brief.");
    const ran = await spool([
      "run",
      "desk/brief",
      "--input",
      "topic=tide pools",
      "--continuity",
      "once",
    ]);
    expect(ran).toMatchObject({ code: 0, stderr: "" });

    const [fromChat] = await systemPrompts("talk");
    expect(fromChat).toContain(
      "Write a brief about tide pools in at most 50 words. Mention $topics only once.",
    );
    expect(fromChat).not.toContain("# Inputs");
    expect(await systemPrompts("once")).toEqual([fromChat]);

    // The inputs are on the log: a replay compiles the same prompt without being given them.
    const replay = await spool(["replay", "talk", "--verify"]);
    expect(replay.stderr).toBe("");
    expect(replay.code).toBe(0);
  });

  it("goes on in spool chat with the directive and tools spool run started a continuity with", async () => {
    const ran = await spool(["run", "assistant", "--prompt", "hi", "--continuity", "ran"]);
    expect(ran).toMatchObject({ code: 0, stderr: "" });
    const chatted = await chat(["--continuity", "ran"], ["again"]);
    expect(chatted.stderr).toBe("");
    expect(chatted.code).toBe(0);
    // The run had the directive's own tools (no agent manifest): the chat's turn has them too.
    const [first, second] = await systemPrompts("ran");
    expect(second).toBe(first);
    const replay = await spool(["replay", "ran", "--verify"]);
    expect(replay.stderr).toBe("");
    expect(replay.stdout).toContain("identical");
    expect(replay.code).toBe(0);
  });

  it("refuses a missing required input in spool chat with spool run's error, before any turn", async () => {
    const chatted = await chat(["--directive", "desk/brief", "--continuity", "talk"], ["go"]);
    const ran = await spool(["run", "desk/brief", "--continuity", "once"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('input "topic" (string) is required: What the brief is about');
    expect(chatted).toEqual({ code: 2, stdout: expect.any(String), stderr: ran.stderr });
    expect(chatted.stdout).not.toContain("A brief.");
    const badType = await chat(
      ["--directive", "desk/brief", "--input", "topic=x", "--input", "words=many"],
      ["go"],
    );
    expect(badType.code).toBe(2);
    expect(badType.stderr).toContain('input "words" must be a number');
  });
});
