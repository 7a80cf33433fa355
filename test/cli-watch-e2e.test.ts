/**
 * `spool watch` as a user runs it: a real process on a real pseudo-terminal (util-linux
 * `script`), tailing a log file the test writes, against a loopback OpenAI-compatible model.
 * Ctrl-C stops it cleanly (exit 0, where the source stands printed, the lease released); a
 * second `spool watch` goes on at the next chunk, so no chunk is read or delivered twice; a
 * rotation (renamed away, created again) shows as one line and loses no line; the log replays
 * identically.
 */
import { renameSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventData } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import {
  createWorkspace,
  eventsOf,
  hasScript,
  leaseLive,
  readEvents,
  type SpoolProcess,
  spoolOnPty,
  type Workspace,
} from "./support/cli-e2e.js";
import type { LocalModelServer } from "./support/local-model-server.js";
import {
  appendLog,
  deliveredChunks,
  loggedChunks,
  modelEnv,
  seenNote,
  startNoteTaker,
  upTo,
  writeWatcher,
} from "./support/watch-fixtures.js";

/** Each spool process loads the sources through tsx: seconds apiece on a busy machine. */
const PROCESSES_TIMEOUT = 150_000;
const CONTINUITY = "watch-tailer";

describe.skipIf(!hasScript)(
  "spool watch on a terminal (needs util-linux `script`)",
  { timeout: PROCESSES_TIMEOUT },
  () => {
    let workspace: Workspace;
    let server: LocalModelServer;
    let log: string;
    const running: SpoolProcess[] = [];

    const watch = () => {
      const spool = spoolOnPty(["watch", "--agent", "tailer"], {
        cwd: workspace.dir,
        env: workspace.env(modelEnv(server)),
      });
      running.push(spool);
      return spool;
    };
    /** Ctrl-C, then the exit code once the process has stopped. */
    const interrupt = async (spool: SpoolProcess) => {
      spool.type("\x03");
      return (await spool.exited).code;
    };

    beforeEach(async () => {
      workspace = createWorkspace("spool-watch-e2e-");
      server = await startNoteTaker();
      log = join(workspace.dir, "logs", "app.log");
      writeWatcher(workspace.dir, "tailer", {
        id: "app",
        kind: "file",
        target: "logs/app.log",
        patterns: { error: "ERROR" },
        batch: { max_lines: 500, max_wait_ms: 100 },
      });
    });
    afterEach(async () => {
      for (const spool of running.splice(0)) spool.kill();
      await server.close();
      workspace.remove();
    });

    it("stops cleanly on Ctrl-C, and a second watch goes on at the next chunk through a rotation", async () => {
      appendLog(log, 1, 1_200);
      const first = watch();
      // The model's note on the newest line: everything written so far was delivered.
      await first.showsOnScreen(seenNote(1_200));
      await first.showsOnScreen(/▸ app: chunks? 1/);
      expect(await interrupt(first)).toBe(0);
      const screen = first.lines().join("\n");
      expect(screen).toContain("■ stopping (Ctrl-C again stops at once)");
      expect(screen).toMatch(/^app +file +logs\/app\.log +active +3 +/m);
      expect(screen).toContain("Run `spool watch --agent tailer` to go on from here.");
      // The digest is the model's: the terminal shows one line per delivery.
      expect(screen).not.toContain("Source app (file logs/app.log)");
      expect(await leaseLive(workspace.dir, CONTINUITY)).toBe(false);
      let events = await readEvents(workspace.dir, CONTINUITY);
      expect(loggedChunks(events, "app")).toEqual(upTo(3));
      expect(deliveredChunks(events, "app")).toEqual(upTo(3));

      // Written while nobody watches, then rotated: renamed away and created again.
      appendLog(log, 1_201, 10);
      const second = watch();
      await second.showsOnScreen(/app \(file logs\/app\.log\) from chunk 4/);
      await second.showsOnScreen(seenNote(1_210));
      renameSync(log, `${log}.1`);
      appendLog(log, 1_211, 5);
      await second.showsOnScreen(
        "↻ app: rotated (renamed away): reading the new file from its start",
      );
      await second.showsOnScreen(seenNote(1_215));
      expect(await interrupt(second)).toBe(0);
      expect(second.lines().join("\n")).toMatch(/^app +file +logs\/app\.log +active +5 +/m);

      events = await readEvents(workspace.dir, CONTINUITY);
      // Every line once, in order, across both watches and the rotation.
      const lines = eventsOf(events, "source.chunk").flatMap(
        (event) => (event.data as EventData<"source.chunk">).lines ?? [],
      );
      expect(lines.map((line) => Number(line.split(" ")[1]))).toEqual(upTo(1_215));
      expect(loggedChunks(events, "app")).toEqual(upTo(5));
      expect(deliveredChunks(events, "app")).toEqual(upTo(5));
      // The second watch's first delivery starts where the first watch stopped.
      const ranges = eventsOf(events, "turn.added").flatMap((event) => event.data.sources ?? []);
      expect(ranges.find((range) => range.to_chunk >= 4)?.from_chunk).toBe(4);

      const replay = await runSpool(["replay", CONTINUITY, "--verify"], {
        cwd: workspace.dir,
        env: workspace.env(modelEnv(server)),
      });
      expect(replay.stdout).toMatch(/^identical: /);
      expect(replay.code).toBe(0);
    });
  },
);
