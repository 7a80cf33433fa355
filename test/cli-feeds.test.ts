/**
 * Context feeds as a user of the CLI meets them (issue 15): an agent manifest's relic feed is
 * read through the action path and its value fills `$id` in the answer, the model adds a feed
 * with an internal action the manifest allows and is refused one it leaves out, and
 * `spool replay --verify` re-derives the run as identical.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConversationView } from "../src/cli/commands/conversation-view.js";
import { createStyle } from "../src/cli/format.js";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import { createWorkspace, readEvents, type Workspace } from "./support/cli-e2e.js";

const MANIFEST = `directive: assistant
tools: [clock.now]
context_feeds:
  - id: motd
    type: on_demand
    source: { type: relic, name: kv.get, params: { key: motd } }
internal_actions:
  allowed_actions: [add_context_feed, update_context_feed]
`;

const action = (type: string, id: string, name: string, parameters: unknown) =>
  `<action type="${type}" mode="sync" id="${id}">${JSON.stringify({ name, parameters })}</action>`;

const SCRIPT = [
  action("relic", "save", "kv.set", { key: "motd", value: "ship it" }) +
    action("internal", "add", "add_context_feed", {
      id: "dice",
      type: "on_demand",
      source: { type: "internal", action: "random", params: { kind: "uuid" } },
    }) +
    action("internal", "rm", "remove_context_feed", { id: "motd" }) +
    '<response final="false">noted</response>',
  "<response>Today: $motd.value</response>",
];

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);

describe("context feeds through the CLI", { timeout: 120_000 }, () => {
  let workspace: Workspace;

  beforeEach(() => {
    workspace = createWorkspace("spool-cli-feeds-");
  });

  afterEach(() => {
    workspace.remove();
  });

  it("reads a relic feed into $motd, lets the model add a feed the manifest allows, and replays identical", async () => {
    mkdirSync(join(workspace.dir, ".ai", "agents"), { recursive: true });
    writeFileSync(join(workspace.dir, ".ai", "agents", "watcher.yaml"), MANIFEST);
    const script = join(workspace.home, "script.json");
    writeFileSync(script, JSON.stringify({ turns: SCRIPT }));
    const env = workspace.env({ SPOOL_PROVIDER: "scripted", SPOOL_SCRIPT: script });

    const run = await runSpool(
      ["run", "assistant", "--agent", "watcher", "--continuity", "feeds", "--prompt", "hi"],
      { cwd: workspace.dir, env },
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Today: ship it");

    const events = await readEvents(workspace.dir, "feeds");
    // The relic feed read through the action path on its own step, once per step.
    const reads = events.filter(
      (event) => event.type === "action.dispatched" && event.stream.id === "feed@motd",
    );
    expect(reads.map((event) => (event.data as EventData<"action.dispatched">).name)).toEqual([
      "kv.get",
      "kv.get",
    ]);
    expect(data(events, "feed.added")).toContainEqual(
      expect.objectContaining({ feed_id: "dice", by: "action", action_id: "add" }),
    );
    expect(data(events, "action.skipped")).toContainEqual(
      expect.objectContaining({ action_id: "rm", reason: "not-allowed" }),
    );
    expect(data(events, "feed.removed")).toEqual([]);

    // `spool tail`'s view shows the model's actions, not the feed engine's reads.
    let shown = "";
    const view = new ConversationView({
      style: createStyle(false),
      width: 200,
      write: (chunk) => {
        shown += chunk;
      },
    });
    for (const event of events) view.push(event);
    view.finish();
    expect(shown).toContain("relic kv.set");
    expect(shown).not.toContain("kv.get");

    const replay = await runSpool(["replay", "feeds", "--verify"], { cwd: workspace.dir, env });
    expect(replay.stdout).toMatch(/^identical: /);
    expect(replay.code).toBe(0);
  });
});
