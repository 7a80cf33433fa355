/**
 * `spool chat` end to end: a real process on a real pseudo-terminal, in a fresh workspace with
 * no provider key, driven by keys (Enter, Ctrl-C, Ctrl-D) and watched through what it shows.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";
import {
  createWorkspace,
  eventsOf,
  hasScript,
  readEvents,
  runSpoolProcess,
  type SpoolProcess,
  spoolOnPty,
  type Workspace,
} from "./support/cli-e2e.js";

/** Each spool process loads the sources through tsx: seconds apiece on a busy machine. */
const PROCESSES_TIMEOUT = 120_000;
const PROMPT = "you › ";
/** The totals line of a finished demo run, then the prompt back. */
const AFTER_RUN = /Σ 2 steps · 3 actions[^\n]*\n+you › /;
const WEEKDAYS = /Happy (Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)!/;

describe.skipIf(!hasScript)(
  "spool chat on a real terminal (needs util-linux `script`)",
  { timeout: PROCESSES_TIMEOUT },
  () => {
    let workspace: Workspace;
    const running: SpoolProcess[] = [];

    const chat = (args: string[] = [], env: Record<string, string> = {}) => {
      const spool = spoolOnPty(["chat", ...args], { cwd: workspace.dir, env: workspace.env(env) });
      running.push(spool);
      return spool;
    };
    /** `spool` in-process, for the commands that only read the log. */
    const inspect = (args: string[]) =>
      runSpool(args, { cwd: workspace.dir, env: workspace.env() });

    beforeEach(() => {
      workspace = createWorkspace("spool-chat-e2e-");
    });

    afterEach(() => {
      for (const spool of running.splice(0)) spool.kill();
      workspace.remove();
    });

    it("runs the demo without a key, continues the chat after a restart, and replays it identically", async () => {
      writeFileSync(join(workspace.dir, "notes.md"), "# Notes\n\nTODO: water the plants\n");

      const first = chat();
      await first.shows(PROMPT);
      const opening = first.plain().trimStart();
      expect(opening.split("\n")[0]).toMatch(
        /^No model provider is configured: running Spool's built-in demo agent/,
      );
      expect(opening).toContain("new chat chat");

      let from = first.mark();
      first.type("hello\r");
      await first.shows("re-derives it exactly", from);
      await first.shows(AFTER_RUN, from);

      const shown = first.plain().slice(from);
      // The thought streams dimmed: SGR 2 opens before its first word.
      const marker = first.screen.indexOf("\x1b[2m· thinking\x1b[22m");
      expect(marker).toBeGreaterThanOrEqual(0);
      expect(first.screen.indexOf("\x1b[2mLet\x1b[22m", marker)).toBeGreaterThan(marker);
      expect(shown).toContain("Let me look at the workspace and the time at once");
      for (const tool of ["fs.list", "clock.now", "fs.search"]) {
        expect(shown).toMatch(new RegExp(`✓ ${tool.replace(".", "\\.")} \\d+(\\.\\d)? m?s`));
      }
      expect(shown).toMatch(WEEKDAYS);
      expect(shown).not.toContain("$now.weekday");
      // The answer reads as prose: counts, not a JSON array of matches.
      expect(shown).toContain("Searched 1 files; lines with TODO: 1");
      expect(shown).not.toContain('["');
      expect(shown.match(/↳ [\d,]+ in · [\d,]+ out/g)).toHaveLength(2);
      // The response is not final: the second step's answer comes after its usage line.
      expect(shown.search(WEEKDAYS)).toBeLessThan(shown.indexOf("↳"));
      expect(shown.lastIndexOf("↳")).toBeGreaterThan(shown.indexOf("re-derives it exactly"));
      expect(shown).not.toMatch(/\n\s+at /);

      first.type("\x04");
      expect(await first.exited).toMatchObject({ code: 0 });

      const second = chat();
      await second.shows("chat chat, 1 turn so far");
      await second.shows(PROMPT);
      from = second.mark();
      second.type("and again\r");
      await second.shows(AFTER_RUN, from);
      second.type("\x04");
      expect(await second.exited).toMatchObject({ code: 0 });

      const replay = await inspect(["replay", "chat", "--verify"]);
      expect(replay.stderr).toBe("");
      expect(replay.stdout).toMatch(
        /^identical: \d+ decisions re-derived of \d+ events, 1 restart re-enacted\n$/,
      );
      expect(replay.code).toBe(0);

      const verified = await inspect(["verify", "chat"]);
      expect(verified.stdout).toContain('OK: continuity "chat"');
      expect(verified.code).toBe(0);

      const threads = await inspect(["threads", "chat", "--json"]);
      expect(threads.code).toBe(0);
      const rows = threads.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { directive: string; steps: number });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ directive: "demo", steps: 4 });

      const events = await readEvents(workspace.dir, "chat");
      expect(events.filter((event) => event.type === "turn.added").map((e) => e.data)).toEqual([
        expect.objectContaining({ text: "hello" }),
        expect.objectContaining({ text: "and again" }),
      ]);
      expect(eventsOf(events, "run.completed").map((event) => event.data.status)).toEqual([
        "completed",
        "completed",
      ]);

      const fresh = await runSpoolProcess(["chat", "--new"], {
        cwd: workspace.dir,
        env: workspace.env(),
      });
      expect(fresh.code).toBe(0);
      expect(fresh.stdout).toMatch(/new chat chat-\d{8}T\d{6}/);
      const heads = await inspect(["continuities", "--json"]);
      const chats = heads.stdout
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { continuity: string }).continuity)
        .filter((id) => id === "chat" || id.startsWith("chat-"));
      expect(chats).toHaveLength(2);
      expect(chats).toContain("chat");
    });

    it("cancels the running step on Ctrl-C, returns to the prompt, and exits 0 on Ctrl-D", async () => {
      const words = Array.from({ length: 200 }, (_, index) => `word${index + 1}`);
      const script = join(workspace.home, "long.yaml");
      writeFileSync(
        script,
        `turns:\n  - ${JSON.stringify(`<response>${words.join(" ")} end-of-answer</response>`)}\n`,
      );
      const spool = chat([], {
        SPOOL_PROVIDER: "scripted",
        SPOOL_SCRIPT: script,
        SPOOL_SCRIPT_TOKEN_MS: "20",
      });
      await spool.shows(PROMPT);
      expect(spool.plain()).not.toContain("No model provider is configured");

      const from = spool.mark();
      spool.type("tell me a long story\r");
      await spool.shows("word5 ", from);
      spool.type("\x03");
      await spool.shows(/■ cancelled[^\n]*\n+you › /, from);

      const shown = spool.plain().slice(from);
      expect(shown).not.toContain("end-of-answer");
      expect(shown).not.toMatch(/\n\s+at /);
      spool.type("\x04");
      expect(await spool.exited).toMatchObject({ code: 0 });

      const events = await readEvents(workspace.dir, "chat");
      const completed = eventsOf(events, "run.completed");
      expect(completed.map((event) => event.data.status)).toEqual(["cancelled"]);
    });
  },
);
