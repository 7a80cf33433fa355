/**
 * An agent with MCP servers, end to end: tools from real servers (`server-everything` over stdio
 * and the faulty test server) offered as `mcp.<server>.<tool>`, progress as `action.progress`,
 * a tool error, a crash mid-call (typed error, restart, the next call works), a server that
 * never answers (the action's timeout), a refused schema, and a replay with no server at all.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import { type PreparedMcp, prepareAgentMcp, recordMcpListings } from "../src/mcp/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import { EVERYTHING, FAULTY } from "./support/mcp-servers.js";
import { readAll, tempStore } from "./support/transcripts.js";

let store: EventStore;
let cleanup: () => Promise<void>;
let workspace: string;
let home: string;
let starts: string;

const action = (id: string, name: string, parameters: object, extra: object = {}) =>
  `<action type="tool" mode="sync" id="${id}">${JSON.stringify({ name, parameters, ...extra })}</action>`;

const SCRIPT = [
  {
    when: "use the servers",
    text: [
      action("a1", "mcp.everything.get-sum", { a: 2, b: 3 }),
      action("a2", "mcp.everything.trigger-long-running-operation", { duration: 0.2, steps: 2 }),
      action("a3", "mcp.everything.get-resource-reference", { resourceId: 1.5 }),
      action("a4", "mcp.faulty.crash", {}),
      action("a5", "mcp.faulty.echo", { text: "after the crash" }),
      action("a6", "mcp.faulty.hang", {}, { timeout: 1 }),
      action("a7", "mcp.everything.get-sum", { a: "two", b: 3 }),
    ].join(""),
  },
  { when: "<result id=", text: "<response>done</response>" },
];

beforeAll(async () => {
  ({ store, cleanup } = await tempStore("spool-mcp-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-mcp-ws-"));
  home = mkdtempSync(join(tmpdir(), "spool-mcp-home-"));
  starts = join(workspace, "faulty-starts.txt");
  writeFileSync(starts, "");
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
  writeFileSync(
    join(workspace, ".ai", "mcp.json"),
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, "stdio"], timeout: 30 },
        faulty: {
          command: process.execPath,
          args: [FAULTY],
          // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp.json's own syntax
          env: { MCP_FAULTY_STARTS: "${env:FAULTY_STARTS}" },
        },
      },
    }),
  );
  writeFileSync(
    join(workspace, ".ai", "agents", "tooled.yaml"),
    "directive: assistant\nmcp: [everything, faulty]\n",
  );
});
afterAll(async () => {
  await cleanup();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const env = () => ({ FAULTY_STARTS: starts });
const prepare = (source: EventStore, discover: boolean) =>
  prepareAgentMcp({
    workspace,
    home,
    env: env(),
    store: source,
    continuity: "work",
    agent: "tooled",
    discover,
  });
const assemble = (
  target: EventStore,
  mcp: PreparedMcp,
  provider: Provider = createScriptedProvider({ model: "scripted", script: SCRIPT }),
) =>
  assembleAgent({
    workspace,
    home,
    store: target,
    continuity: "work",
    env: env(),
    agent: "tooled",
    provider,
    mcp,
  });

const dataOf = <T extends string>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<never>);

describe("an agent with MCP servers", () => {
  it("calls their tools, reports progress and failures, survives a crash, and replays with no server", async () => {
    await store.append({
      continuity: "work",
      type: "continuity.created",
      actor: "ada",
      origin: "t",
      data: { title: "work" },
    });
    const prepared = await prepare(store, true);
    await recordMcpListings(store, prepared);
    expect([...prepared.failed]).toEqual([]);
    const assembled = assemble(store, prepared);
    const names = assembled.options.agent.tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["mcp.everything.get-sum", "mcp.faulty.echo"]));
    expect(names).not.toContain("mcp.faulty.not-an-object");
    expect(names).not.toContain("mcp.faulty.broken-ref");

    const runtime = createAgentRuntime({ store, ...assembled.options });
    const result = await runtime.submit("work", {
      text: "Please use the servers.",
      actor: "ada",
      origin: "t",
    });
    await runtime.close();
    await assembled.close();
    expect(result.status).toBe("completed");

    const events = await readAll(store, "work");
    const listed = dataOf(events, "mcp.tools-listed") as EventData<"mcp.tools-listed">[];
    expect(listed.map((item) => item.server).sort()).toEqual(["everything", "faulty"]);
    const refused = dataOf(events, "mcp.tool-refused") as EventData<"mcp.tool-refused">[];
    expect(refused.map((item) => item.tool).sort()).toEqual(["broken-ref", "not-an-object"]);
    expect(refused.find((item) => item.tool === "not-an-object")?.reason).toMatch(/"string"/);

    const byId = (type: string, id: string) =>
      events.find(
        (event) => event.type === type && (event.data as { action_id?: string }).action_id === id,
      );
    expect(byId("action.succeeded", "a1")?.data).toMatchObject({
      output: { content: [{ type: "text", text: expect.stringContaining("5") }] },
    });
    const progress = events.filter((event) => event.type === "action.progress");
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]!.data).toMatchObject({
      action_id: "a2",
      data: { progress: expect.any(Number), total: 2 },
    });
    expect(byId("action.failed", "a3")?.data).toMatchObject({
      error: { code: "relic.mcp.tool-error" },
    });
    expect(byId("action.failed", "a4")?.data).toMatchObject({
      error: { code: "relic.mcp.crashed" },
    });
    expect(byId("action.succeeded", "a5")?.data).toMatchObject({
      output: { content: [{ text: "echo: after the crash" }] },
    });
    expect(byId("action.timed-out", "a6")).toBeDefined();
    expect(byId("action.skipped", "a7")?.data).toMatchObject({ reason: "bad-parameters" });
    const restarts = (dataOf(events, "relic.started") as EventData<"relic.started">[]).filter(
      (item) => item.relic === "mcp-faulty",
    );
    expect(restarts.map((item) => item.restart)).toEqual([0, 1]);
    // Discovery, the first start, and the restart after the crash.
    const launched = readFileSync(starts, "utf8").trim().split("\n").length;
    expect(launched).toBe(3);
    expect(JSON.stringify(events)).not.toContain(starts);

    // Replay: the tools come from the log, every call's result too; no server is started.
    const replayPrepared = await prepare(store, false);
    expect(replayPrepared.listings.get("faulty")?.map((tool) => tool.name)).toContain("echo");
    const report = await replayContinuity({
      source: store,
      continuity: "work",
      makeRuntime: ({ store: scratch, world }) => {
        const again = assemble(scratch, replayPrepared, world.provider);
        return createAgentRuntime({ store: scratch, ...again.options, world });
      },
    });
    expect(report.difference).toBeUndefined();
    expect(report.reached).toEqual([]);
    expect(report.identical).toBe(true);
    expect(readFileSync(starts, "utf8").trim().split("\n").length).toBe(launched);
  });
});
