/**
 * `spool chat`'s slash commands through the CLI: an unknown `/word` is answered "unknown command"
 * (naming the nearest known one) and never becomes a turn; `/help` lists every command; `//`
 * sends a turn that starts with `/`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { classifyChatLine, SLASH_HELP } from "../src/cli/commands/chat-slash.js";
import { main } from "../src/cli/main.js";
import { memoryOutput } from "./support/cli.js";
import { createWorkspace, readEvents, type Workspace } from "./support/cli-e2e.js";

describe("spool chat slash commands", () => {
  let workspace: Workspace;
  beforeEach(() => {
    workspace = createWorkspace("spool-chat-slash-");
  });
  afterEach(() => workspace.remove());

  /** Runs `spool chat` in-process, reading `lines` from a pipe, on a one-answer script. */
  async function chat(lines: string[]) {
    const script = join(workspace.home, "script.yaml");
    writeFileSync(script, 'turns:\n  - "<response>noted</response>"\n');
    const stdout = memoryOutput();
    const stderr = memoryOutput();
    const code = await main(["chat"], {
      stdout,
      stderr,
      env: workspace.env({ SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: script }),
      cwd: workspace.dir,
      terminal: { input: Readable.from(lines.map((line) => `${line}\n`)) },
    });
    return { code, stdout: stdout.text, stderr: stderr.text };
  }

  it("answers an unknown command with the nearest one, sends none of them, and /help lists all", async () => {
    const result = await chat(["/pnis", "/frobnicate the widget", "/help", "//pins are sharp"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "unknown command /pnis (did you mean /pins?): not sent to the model",
    );
    expect(result.stdout).toMatch(/unknown command \/frobnicate: not sent to the model/);
    for (const name of ["/pin ", "/pin-rule ", "/pins ", "/unpin ", "/help ", "//text "]) {
      expect(result.stdout).toContain(`\n${name}`);
    }
    const events = await readEvents(workspace.dir, "chat");
    const turns = events.filter((event) => event.type === "turn.added");
    expect(turns.map((event) => (event.data as { text: string }).text)).toEqual([
      "/pins are sharp",
    ]);
    expect(result.stdout).toContain("noted");
  });

  it("tells commands, unknown commands and turns apart", () => {
    expect(classifyChatLine(" /PINS ")).toEqual({ kind: "command", name: "/pins", argument: "" });
    expect(classifyChatLine("/pin  a b ")).toEqual({
      kind: "command",
      name: "/pin",
      argument: "a b",
    });
    expect(classifyChatLine("/hepl")).toEqual({ kind: "unknown", name: "/hepl", nearest: "/help" });
    expect(classifyChatLine("/quit")).toEqual({ kind: "unknown", name: "/quit" });
    expect(classifyChatLine("/usr/bin is where?")).toEqual({
      kind: "turn",
      text: "/usr/bin is where?",
    });
    expect(classifyChatLine("//help")).toEqual({ kind: "turn", text: "/help" });
    expect(classifyChatLine("/ spaced")).toEqual({ kind: "turn", text: "/ spaced" });
    expect(SLASH_HELP).toHaveLength(6);
  });
});
