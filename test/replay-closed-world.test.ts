/**
 * Replay in a closed world (issue 14): every continuity the corpus writes the way a user does
 * (kv relic and workflows, handoff summaries on each provider format, Ctrl-C mid-tag and
 * mid-tool, a SIGKILL crash and its resume, a directive in a sub-folder) replays `identical`
 * through `spool replay` and reaches nothing outside: no tool, relic, workflow, model call,
 * feed source or fetch (the world throws `replay.outside-call` on any and the report lists it),
 * no request to the provider server, no side effect repeated.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { createReplayWorld, ReplayOutsideCallError } from "../src/replay/index.js";
import type { AgentRuntimeOptions } from "../src/runtime/index.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, type Workspace } from "./support/cli-e2e.js";
import {
  CRASH_FILE,
  HANDOFF_PROVIDERS,
  HOOK_FILE,
  writeCrash,
  writeCtrlCMidTag,
  writeCtrlCMidTool,
  writeDirectiveInFolder,
  writeHandoff,
  writeHookWithTool,
  writeKvWorkflow,
} from "./support/replay-corpus.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

/**
 * The corpus is written twice: with the default durability (every intent durable before its
 * effect) and with `fast`, where a step's model call and a pure tool start while their intents
 * are written. Both must replay the same way.
 */
for (const durability of ["strict", "fast"] as const) {
  describe(`closed-world replay (${durability})`, { timeout: 120_000 }, () => {
    let workspace: Workspace;
    /** A workspace of its own for the hook: a project hook fires on every continuity of its space. */
    let hookSpace: Workspace;
    let server: ReplayServer;
    const corpus: string[] = [];
    const fixed = { SPOOL_DURABILITY: durability };

    beforeAll(async () => {
      workspace = createWorkspace("spool-closed-world-", fixed);
      server = await startReplayServer();
      corpus.push(await writeKvWorkflow(workspace));
      corpus.push(await writeDirectiveInFolder(workspace));
      corpus.push(await writeCtrlCMidTag(workspace));
      corpus.push(await writeCtrlCMidTool(workspace));
      for (const provider of HANDOFF_PROVIDERS) {
        corpus.push(await writeHandoff(workspace, server, provider));
      }
      corpus.push(await writeCrash(workspace));
      hookSpace = createWorkspace("spool-closed-world-hook-", fixed);
      await writeHookWithTool(hookSpace);
    }, 240_000);

    afterAll(async () => {
      await server?.close();
      workspace?.remove();
      hookSpace?.remove();
    });

    it("replays every continuity of the corpus identical, reaching nothing outside", async () => {
      const listed = await runSpool(["continuities", "--json"], {
        cwd: workspace.dir,
        env: workspace.env(),
      });
      // Every continuity the store holds is in the corpus: none is left out of the replay.
      const all = listed.stdout
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { continuity: string }).continuity);
      expect([...all].sort()).toEqual([...corpus].sort());

      const requests = server.requests.length;
      const written = readFileSync(join(workspace.dir, CRASH_FILE), "utf8");
      for (const continuity of corpus) {
        const result = await runSpool(["replay", continuity, "--json"], {
          cwd: workspace.dir,
          env: workspace.env(),
        });
        expect(result.stderr, continuity).toBe("");
        const report = JSON.parse(result.stdout) as Record<string, unknown>;
        expect(report, `${continuity}: ${result.stdout}`).toMatchObject({
          identical: true,
          reached: [],
        });
        expect(result.code, continuity).toBe(0);
        // The crash and the cancels were re-enacted, not stepped around.
        if (continuity === "crash") expect(report.recoveries).toBe(1);
        if (continuity.startsWith("ctrl-c")) expect(report.cancels).toBe(1);
      }
      expect(server.requests.length, "replay called a provider").toBe(requests);
      expect(readFileSync(join(workspace.dir, CRASH_FILE), "utf8")).toBe(written);
    });

    it("replays a hook whose action is a side-effecting tool without running it again", async () => {
      const before = readFileSync(join(hookSpace.dir, HOOK_FILE), "utf8");
      expect(before).toBe("hooked\n");
      const result = await runSpool(["replay", "hook-tool", "--json"], {
        cwd: hookSpace.dir,
        env: hookSpace.env(),
      });
      expect(result.stderr).toBe("");
      expect(JSON.parse(result.stdout)).toMatchObject({ identical: true, reached: [] });
      expect(result.code).toBe(0);
      expect(readFileSync(join(hookSpace.dir, HOOK_FILE), "utf8")).toBe(before);
    });
  });
}

describe("the replay world", () => {
  const world = () =>
    createReplayWorld({
      provider: createScriptedProvider({ model: "m", script: [] }),
      intercept: () => Promise.resolve("recorded"),
      recordedFeeds: () => undefined,
      now: () => 42,
    });

  it("turns every tool, executor, feed source and fetch a runtime holds into a typed error naming it", async () => {
    const ran: string[] = [];
    const tool = defineTool({
      name: "fs.write",
      description: "writes",
      parameters: z.object({}),
      execute: () => {
        ran.push("tool");
        return "written";
      },
    });
    const executor = {
      type: "relic" as const,
      execute: () => {
        ran.push("relic");
        return Promise.resolve("called");
      },
    };
    const closed = world();
    const options = closed.enclose({
      provider: createScriptedProvider({ model: "real", script: [] }),
      agent: {
        directive: "d",
        instructions: "",
        model: "m",
        limits: {},
        permits: () => true,
        tools: [tool],
      },
      executors: [executor],
      stepExecutors: () => [{ ...executor, type: "workflow" as const }],
    } as unknown as AgentRuntimeOptions);
    const call = {
      actionId: "a1",
      type: "relic" as const,
      name: "kv.set",
      parameters: {},
      attempt: 1,
      signal: new AbortController().signal,
      progress: () => {},
    };
    expect(options.provider).toBe(closed.provider);
    expect(options.now?.()).toBe(42);
    expect(() => options.agent.tools[0]!.execute({}, call)).toThrow(ReplayOutsideCallError);
    expect(() => options.executors![0]!.execute(call)).toThrow(
      expect.objectContaining({ code: "replay.outside-call" }),
    );
    const step = options.stepExecutors!({} as never)[0]!;
    expect(() => step.execute({ ...call, type: "workflow", name: "tick" })).toThrow(
      /replay reached workflow "tick"/,
    );
    await expect(closed.fetch("https://example.com/x")).rejects.toMatchObject({
      code: "replay.outside-call",
    });
    expect(ran).toEqual([]);
    expect(closed.reached).toEqual([
      { kind: "tool", name: "fs.write" },
      { kind: "relic", name: "kv.set" },
      { kind: "workflow", name: "tick" },
      { kind: "fetch", name: "https://example.com/x" },
    ]);
  });
});
