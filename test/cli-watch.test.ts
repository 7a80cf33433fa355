/**
 * `spool watch` in this process, in a fresh workspace whose `.ai/agents/` declares a source,
 * against a loopback OpenAI-compatible model that answers each delivery with a note quoting its
 * newest line: bad input is refused with exit 2 and how to fix it; `--until-exhausted` on a
 * dataset delivers every chunk once, in order, shows each delivery as one line and the notes,
 * ends with the sources' rows, and replays identically; a second watch reads nothing again;
 * `--json` prints the events; `--for` ends on its own with every cursor logged; a continuity
 * another process runs is left to it (exit 1, naming it).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, leaseLive, readEvents, type Workspace } from "./support/cli-e2e.js";
import type { LocalModelServer } from "./support/local-model-server.js";
import { tinyPng } from "./support/tiny-png.js";
import {
  appendLog,
  deliveredChunks,
  loggedChunks,
  logLines,
  modelEnv,
  seenNote,
  startNoteTaker,
  upTo,
  writeWatcher,
} from "./support/watch-fixtures.js";

describe("spool watch", { timeout: 60_000 }, () => {
  let workspace: Workspace;
  let server: LocalModelServer;
  const spool = (args: string[], env: Record<string, string> = modelEnv(server)) =>
    runSpool(args, { cwd: workspace.dir, env: workspace.env(env) });

  beforeEach(async () => {
    workspace = createWorkspace("spool-watch-");
    server = await startNoteTaker();
  });
  afterEach(async () => {
    await server.close();
    workspace.remove();
  });

  /** An agent `importer` over `data/events.jsonl`: 25 lines, ten a chunk, counting ERROR lines. */
  const importer = () => {
    mkdirSync(join(workspace.dir, "data"));
    writeFileSync(join(workspace.dir, "data", "events.jsonl"), logLines(1, 25));
    writeWatcher(workspace.dir, "importer", {
      id: "events",
      kind: "dataset",
      target: "data/events.jsonl",
      patterns: { error: "ERROR" },
      batch: { max_lines: 10 },
    });
  };

  it("refuses bad input and an agent without sources or a model with exit 2, saying how to fix it", async () => {
    importer();
    const badFor = await spool(["watch", "--for", "5"]);
    expect(badFor.code).toBe(2);
    expect(badFor.stderr).toContain('--for "5" is not a duration');
    expect(badFor.stderr).toContain("e.g. --for 30s, --for 5m, --for 2h or --for 1d");
    const both = await spool(["watch", "--for", "1m", "--until-exhausted"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --for or --until-exhausted, not both");

    const none = await spool(["watch", "--agent", "assistant"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('agent "assistant" declares no sources');
    expect(none.stderr).toContain("to .ai/agents/assistant.yaml and add a sources: section there");
    expect(none.stderr).toContain("sources:\n  - id: app-log\n    kind: file");

    writeWatcher(workspace.dir, "runner", { id: "cmd", kind: "command", target: "echo hi" });
    const denied = await spool(["watch", "--agent", "runner"]);
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain('agent "runner" has sources that may not read their targets');
    expect(denied.stderr).toContain("Give the agent the shell.run tool (tools: [shell.run])");
    expect(await readEvents(workspace.dir, "watch-runner")).toEqual([]);

    const noModel = await spool(["watch", "--agent", "importer"], {});
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain("spool watch needs a model");
    expect(noModel.stderr).toContain("OPENAI_BASE_URL");
    // Nothing was started or appended by any of them.
    expect(await readEvents(workspace.dir, "watch-importer")).toEqual([]);
  });

  it("--until-exhausted delivers a dataset once, in order, one line a delivery, and replays identically", async () => {
    importer();
    const first = await spool(["watch", "--agent", "importer", "--until-exhausted"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const lines = first.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^importer · compatible loop · continuity watch-importer · events \(dataset data\/events\.jsonl\) · Ctrl-C stops$/,
    );
    // A dataset is paced: one chunk a delivery, each shown as one line, each answered.
    expect(lines.filter((line) => line.startsWith("▸ events:"))).toEqual([
      "▸ events: chunk 1 · 10 lines · error 1",
      "▸ events: chunk 2 · 10 lines · error 1",
      expect.stringMatching(/^▸ events: chunk 3 · 5 lines · error 1( · input ended)?$/),
      ...(lines.some((line) => line === "▸ events: input ended") ? ["▸ events: input ended"] : []),
    ]);
    expect(first.stdout.split("input ended")).toHaveLength(2);
    for (const line of [10, 20, 25]) expect(lines).toContain(seenNote(line));
    expect(first.stdout).not.toContain("Source events (dataset");
    expect(first.stdout).toContain(
      "■ every source has ended and all it read was delivered: stopping",
    );
    expect(first.stdout).toMatch(/\nevents +dataset +data\/events\.jsonl +exhausted +3 +/);

    const events = await readEvents(workspace.dir, "watch-importer");
    expect(loggedChunks(events, "events")).toEqual(upTo(3));
    expect(deliveredChunks(events, "events")).toEqual(upTo(3));
    expect(events[0]).toMatchObject({
      type: "continuity.created",
      data: { labels: { kind: "watch", agent: "importer" } },
    });
    expect(await leaseLive(workspace.dir, "watch-importer")).toBe(false);

    const replay = await spool(["replay", "watch-importer", "--verify"]);
    expect(replay.stdout).toMatch(/^identical: /);
    expect(replay.code).toBe(0);

    // Watched again: it has ended; nothing is read or delivered twice.
    const again = await spool(["watch", "--agent", "importer", "--until-exhausted"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("events (dataset data/events.jsonl) exhausted after 3 chunks");
    expect(again.stdout).toContain("Every source has ended here;");
    const after = await readEvents(workspace.dir, "watch-importer");
    expect(loggedChunks(after, "events")).toEqual(upTo(3));
    expect(deliveredChunks(after, "events")).toEqual(upTo(3));
  });

  it("says which process runs the continuity and exits 1, appending nothing", async () => {
    importer();
    const other = await openEventStore({ db: join(workspace.dir, ".spool"), env: {} });
    try {
      const held = await other.acquireLease("watch-importer", "pid 4242 on elsewhere", 60_000);
      expect(held.status).toBe("granted");
      const result = await spool(["watch", "--agent", "importer", "--until-exhausted"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        "another process (pid 4242 on elsewhere) is watching continuity watch-importer; follow it with `spool tail watch-importer`",
      );
      expect(await readEvents(workspace.dir, "watch-importer")).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("--json prints the continuity's events as JSON lines, and the sources' rows on stderr", async () => {
    importer();
    const result = await spool(["watch", "--agent", "importer", "--until-exhausted", "--json"]);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as SpoolEvent);
    const logged = await readEvents(workspace.dir, "watch-importer");
    expect(events.map((event) => event.seq)).toEqual(logged.map((event) => event.seq));
    const types = new Set(events.map((event) => event.type));
    for (const type of ["continuity.created", "source.added", "turn.added", "run.completed"]) {
      expect(types).toContain(type);
    }
    expect(events.filter((event) => event.type === "source.chunk")).toHaveLength(3);
    expect(result.stderr).toMatch(/\nevents +dataset +data\/events\.jsonl +exhausted +3 +/);
  });

  it("--for ends on its own: exit 0, every chunk logged once and delivered at most once, replay identical", async () => {
    const log = join(workspace.dir, "logs", "app.log");
    appendLog(log, 1, 120);
    writeWatcher(workspace.dir, "tailer", {
      id: "app",
      kind: "file",
      target: "logs/app.log",
      patterns: { error: "ERROR" },
      batch: { max_lines: 50, max_wait_ms: 50 },
    });
    const result = await spool(["watch", "--agent", "tailer", "--for", "1s"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("■ watched for 1s: stopping");
    expect(result.stdout).toMatch(/\napp +file +logs\/app\.log +active +\d+ +/);
    expect(result.stdout).toContain("Run `spool watch --agent tailer` to go on from here.");
    const events = await readEvents(workspace.dir, "watch-tailer");
    const logged = loggedChunks(events, "app");
    expect(logged).toEqual(upTo(logged.length));
    const delivered = deliveredChunks(events, "app");
    expect(delivered).toEqual(upTo(delivered.length));
    expect(await leaseLive(workspace.dir, "watch-tailer")).toBe(false);
    const replay = await spool(["replay", "watch-tailer", "--verify"]);
    expect(replay.stdout).toMatch(/^identical: /);
    expect(replay.code).toBe(0);
  });

  it("watches an agent whose only input is a screen (watch: with a frame source) until its frames end", async () => {
    mkdirSync(join(workspace.dir, "frames"));
    mkdirSync(join(workspace.dir, ".ai", "agents"), { recursive: true });
    writeFileSync(
      join(workspace.dir, "frames", "001.png"),
      Buffer.from(tinyPng(64, 36, [200, 30, 30]), "base64"),
    );
    writeFileSync(
      join(workspace.dir, ".ai", "agents", "screen.yaml"),
      "directive: assistant\nwatch:\n  source: { directory: ./frames }\n",
    );
    const watched = await spool(["watch", "--agent", "screen", "--until-exhausted"]);
    expect(watched.stderr).not.toContain("declares no sources");
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain("continuity watch-screen · frames (directory ./frames)");
    const events = await readEvents(workspace.dir, "watch-screen");
    expect(events.filter((event) => event.type === "watch.started")).toHaveLength(1);
    expect(events.filter((event) => event.type === "note.added").length).toBeGreaterThan(0);
    expect(watched.stdout).toContain("◦ note");
    expect(watched.stdout).toContain("stopped watching frames: the frame source ended");
    expect(watched.stdout).toContain("■ every source has ended");
    expect(events.filter((event) => event.type === "watch.stopped")).toHaveLength(1);
    // A second watch on the same continuity: another runtime, taken up and closed with no turn.
    expect((await spool(["watch", "--agent", "screen", "--until-exhausted"])).code).toBe(0);
    const replay = await spool(["replay", "watch-screen", "--verify"]);

    expect(replay.stdout).toMatch(/^identical: /);
  });
});
