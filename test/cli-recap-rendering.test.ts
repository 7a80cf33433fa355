/**
 * The chat's recap on restart and `spool tail` show a conversation as the chat showed it live:
 * the user's own turns as `you › text` (anyone else's as `› who: text`), long turns folded,
 * responses rendered as markdown (no `**` or list markers left raw).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";
import { awaitableOutput, memoryOutput, runSpool } from "./support/cli.js";
import { createWorkspace, type Workspace } from "./support/cli-e2e.js";

const ANSWER = "Here is **the plan**:\\n\\n- water the plants\\n- call `mum`";
const LONG = Array.from({ length: 12 }, (_, index) => `line ${index + 1}`).join("\n");

describe("the chat's recap and spool tail", () => {
  let workspace: Workspace;
  let env: Record<string, string | undefined>;
  beforeEach(() => {
    workspace = createWorkspace("spool-recap-");
    const script = join(workspace.home, "script.yaml");
    writeFileSync(script, `turns:\n  - "<response>${ANSWER}</response>"\n`);
    env = workspace.env({ SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: script, USER: "tester" });
  });
  afterEach(() => workspace.remove());

  async function chat(lines: string[]) {
    const stdout = memoryOutput();
    const stderr = memoryOutput();
    const code = await main(["chat"], {
      stdout,
      stderr,
      env,
      cwd: workspace.dir,
      terminal: { input: Readable.from(lines.map((line) => `${line}\n`)) },
    });
    expect(stderr.text).toBe("");
    expect(code).toBe(0);
    return stdout.text;
  }

  it("labels the user's turns as the prompt did, folds a long one and renders markdown", async () => {
    await chat(["make a plan"]);
    const added = await runSpool(["turn", "add", "chat", "--actor", "tester", LONG], {
      cwd: workspace.dir,
      env,
    });
    expect(added.code).toBe(0);
    await chat([]);
    const recap = (await chat([])).split("\n");
    const start = recap.findIndex((line) => line.startsWith("you › make a plan"));
    expect(start).toBeGreaterThan(0);
    expect(recap.slice(start, start + 12)).toEqual([
      "you › make a plan",
      "Here is the plan:",
      "",
      "• water the plants",
      "• call `mum`",
      "you › line 1",
      "      line 2",
      "      line 3",
      "      line 4",
      "      line 5",
      "      … 7 more lines",
      "Here is the plan:",
    ]);

    const stdout = awaitableOutput(false, 100);
    const stop = new AbortController();
    const done = main(["tail", "chat", "--from-start"], {
      stdout,
      stderr: memoryOutput(),
      env: { ...env, USER: "someone-else" },
      cwd: workspace.dir,
      signal: stop.signal,
    });
    await stdout.until("… 7 more lines\n");
    stop.abort();
    expect(await done).toBe(0);
    expect(stdout.text).toContain("› tester: make a plan\n");
    expect(stdout.text).toContain("Here is the plan:\n\n• water the plants\n• call `mum`\n");
    expect(stdout.text).toContain("› tester: line 1\n  line 2\n");
    expect(stdout.text).toContain("  … 7 more lines\n");
    expect(stdout.text).not.toContain("**");
  });

  it("substitutes $variables in responses as the live chat did, in the recap and in spool tail", async () => {
    const script = join(workspace.home, "variables.yaml");
    writeFileSync(
      script,
      `turns:\n  - '<action type="tool" mode="async" id="t">{"name":"clock.now","parameters":{},"output_key":"now"}</action><response>Happy $now.weekday, from $nobody.</response>'\n`,
    );
    env = workspace.env({ SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: script, USER: "tester" });
    const live = await chat(["what day is it?"]);
    const said = live.split("\n").find((line) => line.startsWith("Happy "));
    expect(said).toMatch(/^Happy (Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, from \$nobody\.$/);

    const recap = (await chat([])).split("\n");
    expect(recap, recap.join("\n")).toContain(said);

    const stdout = awaitableOutput(false, 100);
    const stop = new AbortController();
    const done = main(["tail", "chat", "--from-start"], {
      stdout,
      stderr: memoryOutput(),
      env,
      cwd: workspace.dir,
      signal: stop.signal,
    });
    await stdout.until(" out\n");
    stop.abort();
    expect(await done).toBe(0);
    // Beside the action's own line (tail shows it where it ended), the response reads as said.
    expect(stdout.text).toContain(`${said!.slice("Happy ".length)}\n`);
    expect(stdout.text).not.toContain("$now");
  });
});
