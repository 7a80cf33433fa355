/**
 * Replay is exact where it was not (issue 14, defect 4), each through `spool run` and
 * `spool replay` as a user meets them: a kv relic and a workflow, a handoff summary on every
 * provider format, Ctrl-C mid-tag and mid-tool, a directive in a sub-folder; and `spool replay`
 * exits non-zero on a difference without `--verify`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, readEvents, type Workspace } from "./support/cli-e2e.js";
import {
  HANDOFF_PROVIDERS,
  writeCtrlCMidTag,
  writeCtrlCMidTool,
  writeDirectiveInFolder,
  writeHandoff,
  writeKvWorkflow,
} from "./support/replay-corpus.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

const TIMEOUT = 60_000;

let workspace: Workspace;
let server: ReplayServer;

beforeEach(async () => {
  workspace = createWorkspace("spool-replay-exact-");
  server = await startReplayServer();
});
afterEach(async () => {
  await server.close();
  workspace.remove();
});

/** `spool replay <continuity> --json` in a workspace without any provider key. */
async function replay(continuity: string, ...flags: string[]) {
  const result = await runSpool(["replay", continuity, ...flags], {
    cwd: workspace.dir,
    env: workspace.env(),
  });
  return result;
}

/** Replays `continuity` and expects `identical`, exit 0, nothing reached outside. */
async function expectIdentical(continuity: string) {
  const requests = server.requests.length;
  const result = await replay(continuity, "--json");
  expect(result.stderr).toBe("");
  const report = JSON.parse(result.stdout) as { identical: boolean; reached: unknown[] };
  expect(report, result.stdout).toMatchObject({ identical: true, reached: [] });
  expect(result.code).toBe(0);
  expect(server.requests.length, "replay must not call the provider").toBe(requests);
  return report;
}

const types = (events: SpoolEvent[]) => events.map((event) => event.type);

describe("spool replay is exact", { timeout: TIMEOUT }, () => {
  it("for a run with kv relic and workflow actions", async () => {
    const continuity = await writeKvWorkflow(workspace);
    const events = await readEvents(workspace.dir, continuity);
    // The log has what the relic and the workflow wrote themselves.
    expect(types(events)).toEqual(
      expect.arrayContaining(["kv.set", "relic.called", "graph.completed"]),
    );
    // The workflow's step took the action path: its intent is logged on the step named like
    // the graph, before it ran; replay runs the workflow again and serves the step from the log.
    const graph = events.find((event) => event.type === "graph.started")!.stream.id;
    const inner = events.filter(
      (event) => event.stream.kind === "step" && event.stream.id === graph,
    );
    expect(types(inner)).toEqual(["action.dispatched", "action.started", "action.succeeded"]);
    expect(inner[0]!.data).toMatchObject({
      action_id: "steps.now",
      type: "tool",
      name: "clock.now",
    });
    await expectIdentical(continuity);
  });

  it.each(HANDOFF_PROVIDERS.map((provider) => [provider.continuity, provider] as const))(
    "after a handoff summary on %s: the summarizer's model comes from the logged provider",
    async (_name, provider) => {
      const continuity = await writeHandoff(workspace, server, provider);
      const events = await readEvents(workspace.dir, continuity);
      const summarizer = events.find(
        (event) => event.type === "thread.started" && event.stream.id.includes("@summary"),
      );
      expect(summarizer?.data).toMatchObject({ model: provider.summaryModel });
      await expectIdentical(continuity);
    },
  );

  it("after Ctrl-C while the model writes a <response>: the cancel is re-enacted, no protocol error", async () => {
    const continuity = await writeCtrlCMidTag(workspace);
    const events = await readEvents(workspace.dir, continuity);
    const completed = events.find((event) => event.type === "step.completed");
    expect(completed?.data).toMatchObject({ stop_reason: "cancelled" });
    expect(types(events)).not.toContain("protocol.error");
    const report = await expectIdentical(continuity);
    expect(report).toMatchObject({ cancels: 1 });
  });

  it("after Ctrl-C while a tool runs: action.cancelled is derived", async () => {
    const continuity = await writeCtrlCMidTool(workspace);
    const events = await readEvents(workspace.dir, continuity);
    expect(types(events)).toContain("action.cancelled");
    const run = events.filter((event) => event.type === "run.completed").at(-1);
    expect(run?.data).toMatchObject({ status: "cancelled" });
    expect(events.filter((event) => event.type === "thread.cancelled").at(-1)).toMatchObject({
      data: { reason: "cancelled by a signal" },
    });
    // The command then closed its runtime, with nothing left to cancel.
    expect(events.at(-1)).toMatchObject({ type: "runtime.closed", data: { tasks: [] } });
    const report = await expectIdentical(continuity);
    expect(report).toMatchObject({ cancels: 1 });
  });

  it("for a directive in a sub-folder (.ai/directives/data/process.md)", async () => {
    const continuity = await writeDirectiveInFolder(workspace);
    const events = await readEvents(workspace.dir, continuity);
    expect(events.find((event) => event.type === "thread.started")?.data).toMatchObject({
      directive: "data/process",
    });
    await expectIdentical(continuity);
    // `spool resume` finds the directive too (it assembles from the same log).
    const resumed = await runSpool(["resume", continuity], {
      cwd: workspace.dir,
      env: workspace.env(),
    });
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
  });
});

describe("spool replay's exit code", { timeout: TIMEOUT }, () => {
  it("is 1 on a difference, with or without --verify, and 0 when identical", async () => {
    const continuity = await writeDirectiveInFolder(workspace);
    const db = `${workspace.dir}/.spool`;
    // Edit one decision: the loop's reason on the first step.
    const store = await openEventStore({ db });
    const events: SpoolEvent[] = [];
    for await (const event of store.read({ continuity })) events.push(event);
    await store.close();
    const copyDb = `${workspace.home}/edited.db`;
    const copy = await openEventStore({ db: copyDb });
    let edited = false;
    for (const event of events) {
      const { seq: _seq, hash: _hash, criticality: _criticality, ...rest } = event;
      const change: boolean = !edited && event.type === "loop.decided";
      edited ||= change;
      await copy.append(
        change ? { ...rest, data: { ...(rest.data as object), reason: "edited" } } : rest,
      );
    }
    await copy.close();
    expect(edited).toBe(true);

    const plain = await replay(continuity, "--db", copyDb);
    expect(plain.stdout).toMatch(/^differs: /);
    expect(plain.code).toBe(1);
    const verify = await replay(continuity, "--verify", "--db", copyDb);
    expect(verify.stdout).toMatch(/^differs: /);
    expect(verify.code).toBe(1);
    const original = await replay(continuity);
    expect(original.stdout).toMatch(/^identical: /);
    expect(original.code).toBe(0);
    // Without a continuity: the most recently active one (the edited copy's only one).
    const latest = await runSpool(["replay", "--db", copyDb], {
      cwd: workspace.dir,
      env: workspace.env(),
    });
    expect(latest.stdout).toMatch(/^differs: /);
    expect(latest.code).toBe(1);
  });
});
