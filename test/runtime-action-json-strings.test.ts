import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { runSpool } from "./support/cli.js";
import { agentSpec, dataOf, ofType, recordingTool, replay } from "./support/runtime-e2e.js";
import { readAll, tempStore } from "./support/transcripts.js";

// A model that writes an HTML page through a tool puts `</action>`, `<response>` and quotes in a
// JSON string of its action. The parser follows the body's strings, so the whole page reaches the
// tool and no stray response is shown: in a run (streamed word by word) and in
// `spool protocol parse`.

const PAGE =
  '<!doctype html>\n<html><body>\n<response>Hello</response>\n<p class="x">a "quote" and </action> here</p>\n</body></html>\n';
const ACTION = `<action type="tool" mode="sync" id="w1">${JSON.stringify({
  name: "write_file",
  parameters: { path: "index.html", content: PAGE },
})}</action>`;
const OUTPUT = `<thought>Writing the page.</thought>\n${ACTION}\n<response final="false">Writing…</response>`;

describe("an HTML page written through an action", () => {
  let store: EventStore;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ store, cleanup } = await tempStore("spool-json-strings-"));
  });
  afterEach(async () => {
    await cleanup();
  });

  it("reaches the tool whole in a run, with no stray response, and replays identically", async () => {
    const write = recordingTool("write_file", () => ({ written: true }));
    const agent = agentSpec("claude-sonnet-4-5", [write.tool]);
    const provider = createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: [OUTPUT, "<response>The page is written.</response>"],
    });
    const runtime = createAgentRuntime({ store, provider, agent });
    const result = await runtime.submit("home", { text: "Make a page", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result).toMatchObject({ status: "completed", result: "The page is written." });
    expect(write.calls).toEqual([{ path: "index.html", content: PAGE }]);
    const events = await readAll(store, "home");
    expect(ofType(events, "protocol.error")).toEqual([]);
    expect(ofType(events, "action.dispatched").map((event) => dataOf(event).name)).toEqual([
      "write_file",
    ]);
    const report = await replay(store, "home", agent);
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });
});

describe("spool protocol parse", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-json-strings-cli-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints one action holding the whole page and the response after it", async () => {
    writeFileSync(join(dir, "out.txt"), OUTPUT);
    const { code, stdout } = await runSpool(["protocol", "parse", "--coalesce", "out.txt"], {
      cwd: dir,
    });
    expect(code).toBe(0);
    const events = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.filter((event) => event.type === "error")).toEqual([]);
    const actions = events.filter((event) => event.type === "action");
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ action: { parameters: { content: PAGE } } });
    const responses = events.filter(
      (event) => event.type === "block-delta" && event.kind === "response",
    );
    expect(responses.map((event) => event.text)).toEqual(["Writing…"]);
  });
});
