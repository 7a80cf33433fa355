/**
 * An agent with server-everything (over stdio) through the CLI: one of the server's resources
 * as a context feed (read through the `mcp-everything.read_resource` relic method, on the
 * feed's own step), and the server's elicitation requests answered by each policy and logged
 * as `mcp.elicitation-answered` — a form with a required field without a default is declined,
 * and under `"elicitation": "decline"` everything is.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, readEvents, type Workspace } from "./support/cli-e2e.js";
import { EVERYTHING } from "./support/mcp-servers.js";

const FEATURES = "demo://resource/static/document/features.md";
const MANIFEST = `directive: assistant
mcp: [everything]
context_feeds:
  - id: features
    type: on_demand
    source: { type: relic, name: mcp-everything.read_resource, params: { uri: "${FEATURES}" } }
`;

const action = (id: string, name: string, parameters: unknown) =>
  `<action type="tool" mode="sync" id="${id}">${JSON.stringify({ name, parameters })}</action>`;

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);

describe("an agent with server-everything's resources and elicitation", {
  timeout: 120_000,
}, () => {
  let workspace: Workspace;
  beforeEach(() => {
    workspace = createWorkspace("spool-mcp-res-elicit-");
    mkdirSync(join(workspace.dir, ".ai", "agents"), { recursive: true });
    writeFileSync(join(workspace.dir, ".ai", "agents", "reader.yaml"), MANIFEST);
  });
  afterEach(() => workspace.remove());

  const run = async (policy: "defaults" | "decline") => {
    writeFileSync(
      join(workspace.dir, ".ai", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          everything: {
            command: process.execPath,
            args: [EVERYTHING, "stdio"],
            timeout: 30,
            elicitation: policy,
          },
        },
      }),
    );
    const script = join(workspace.home, "script.json");
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          action("ask", "mcp.everything.trigger-elicitation-request", {}),
          "<response>done</response>",
        ],
      }),
    );
    const env = workspace.env({ SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: script });
    const result = await runSpool(
      ["run", "assistant", "--agent", "reader", "--continuity", "c", "--prompt", "hi"],
      { cwd: workspace.dir, env },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    return readEvents(workspace.dir, "c");
  };

  it("reads a resource into a feed and declines a form whose required field has no default", async () => {
    const events = await run("defaults");
    const reads = events.filter(
      (event) => event.type === "action.dispatched" && event.stream.id === "feed@features",
    );
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect((reads[0]!.data as EventData<"action.dispatched">).name).toBe(
      "mcp-everything.read_resource",
    );
    const read = events.find(
      (event) => event.type === "action.succeeded" && event.stream.id === "feed@features",
    );
    expect(JSON.stringify(read?.data)).toContain(FEATURES);

    const [answer, ...more] = data(events, "mcp.elicitation-answered");
    expect(more).toEqual([]);
    expect(answer).toMatchObject({
      server: "everything",
      mode: "form",
      action: "decline",
      reason: {
        code: "elicitation.required-without-default",
        message: 'required field "name" has no default, and there is no person to ask',
      },
    });
    expect(answer!.fields).toEqual(expect.arrayContaining(["name", "check", "integer"]));
    const answered = events.findIndex((event) => event.type === "mcp.elicitation-answered");
    const succeeded = events.findIndex(
      (event) =>
        event.type === "action.succeeded" &&
        (event.data as EventData<"action.succeeded">).action_id === "ask",
    );
    // Logged before the tool's result came back (the answer was sent after it was logged).
    expect(answered).toBeGreaterThan(-1);
    expect(succeeded).toBeGreaterThan(answered);
    expect(JSON.stringify(events[succeeded]!.data)).toContain("declined");
  });

  it("declines every request under the decline policy", async () => {
    const events = await run("decline");
    expect(data(events, "mcp.elicitation-answered")).toEqual([
      expect.objectContaining({
        action: "decline",
        reason: {
          code: "elicitation.policy-decline",
          message: 'the server\'s "elicitation" policy is "decline"',
        },
      }),
    ]);
  });
});
