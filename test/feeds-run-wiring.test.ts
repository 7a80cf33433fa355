/**
 * Context feeds wired into runs (issue 15): `$feed_id` resolves in the actions and responses of
 * a run (the thread's own variables shadow feeds), the model adds, updates and removes feeds with
 * the internal actions within the manifest's allow-list, and relic, llm and workflow sources read
 * through the runtime's action path (logged, permission-checked). Each run is replayed from its
 * log and is identical, reading no source.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyTool, defineTool } from "../src/actions/index.js";
import { parseFeedManifest } from "../src/feeds/index.js";
import type { EventStore } from "../src/log/index.js";
import {
  createScriptedProvider,
  type Provider,
  type ProviderRequest,
} from "../src/providers/index.js";
import { createKvRelic, createRelicExecutor, createRelicHost } from "../src/relics/index.js";
import { type ReplayWorld, replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, AgentSpec } from "../src/runtime/index.js";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import { createWorkflowExecutor, parseWorkflow } from "../src/workflows/index.js";
import { longRunAgent, longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { dyingAt } from "./support/dying-store.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-feeds-wiring-");
const CLOCK = Date.parse("2026-11-23T08:00:00Z");

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);

/** `echo`: returns its parameters, and keeps each call's. */
function echoTool() {
  const calls: Record<string, unknown>[] = [];
  const tool: AnyTool = defineTool({
    name: "echo",
    description: "Returns its parameters.",
    parameters: z.record(z.string(), z.unknown()),
    execute: (parameters) => {
      calls.push(parameters);
      return parameters;
    },
  });
  return { tool, calls };
}

const action = (type: string, id: string, name: string, parameters: unknown) =>
  `<action type="${type}" mode="sync" id="${id}">${JSON.stringify({ name, parameters })}</action>`;

/** Runs `make(store, provider)` for one turn, then replays it with `make` in the closed world. */
async function runAndReplay(
  make: (
    store: EventStore,
    provider: Provider,
    world?: ReplayWorld,
  ) => ReturnType<typeof longRunRuntime>,
  provider: Provider,
) {
  const runtime = make(temp.store, provider);
  const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
  await runtime.settled(continuity);
  await runtime.close();
  const events = await readAll(temp.store, continuity);
  const report = await replayContinuity({
    source: temp.store,
    continuity,
    makeRuntime: ({ store, world }) => make(store, world.provider, world),
  });
  return { result, events, report };
}

describe("$feed_id in a run", () => {
  it("gives a feed's value in action parameters and responses; the thread's variables shadow it; replay is identical", async () => {
    const echo = echoTool();
    const agent = longRunAgent({ tools: [echo.tool] });
    const manifest = parseFeedManifest(`
context_feeds:
  - id: now
    type: on_demand
    source: { type: internal, action: system_clock, params: { format: ISO8601 } }
  - id: place
    type: on_demand
    source: { type: internal, action: environment, params: { names: [REGION] } }
feed_environment: { allow: [REGION] }
`);
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        action("tool", "e1", "echo", { at: "$now", region: "$place.REGION", whole: "$place" }) +
          action("internal", "v1", "set_variable", { name: "now", value: "shadowed" }) +
          '<response final="false">checking</response>',
        `${action("tool", "e2", "echo", { at: "$now" })}<response>In $place.REGION it is $now; $$now stays.</response>`,
      ],
    });
    const make = (store: EventStore, used: Provider, world?: ReplayWorld) =>
      longRunRuntime(store, used, {
        agent,
        feeds: { manifest, clock: { now: () => CLOCK }, env: { REGION: "eu-west" } },
        ...(world ? { world } : {}),
      });
    const { result, events, report } = await runAndReplay(make, provider);

    expect(result.status).toBe("completed");
    expect(echo.calls).toEqual([
      { at: "2026-11-23T08:00:00Z", region: "eu-west", whole: { REGION: "eu-west" } },
      { at: "shadowed" },
    ]);
    // What the executor received is what the log holds.
    const echoed = data(events, "action.dispatched").filter((item) => item.name === "echo");
    expect(echoed.map((item) => item.parameters)).toEqual(echo.calls);
    expect(result.result).toBe("In eu-west it is shadowed; $now stays.");
    // Each step's values are logged with its rendered feeds: replay substitutes from there.
    const feeds = data(events, "context.feeds");
    expect(feeds[0]?.values).toEqual({
      now: "2026-11-23T08:00:00Z",
      place: '{\n  "REGION": "eu-west"\n}',
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });
});

describe("the model's feed actions in a run", () => {
  it("adds and updates feeds, is refused what the allow-list leaves out, and replays identically", async () => {
    const echo = echoTool();
    const agent = longRunAgent({ tools: [echo.tool] });
    const manifest = parseFeedManifest(`
internal_actions:
  allowed_actions: [add_context_feed, update_context_feed, set_variable]
`);
    const clockFeed = {
      id: "clock",
      type: "on_demand",
      source: { type: "internal", action: "system_clock", params: { format: "unix" } },
    };
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        `${action("internal", "add", "add_context_feed", clockFeed)}<response final="false">added</response>`,
        action("tool", "e1", "echo", { at: "$clock" }) +
          action("internal", "upd", "update_context_feed", {
            id: "clock",
            source: { params: { format: "ISO8601" } },
          }) +
          // `$$clock` keeps the reference in the definition: the feed resolves it at each read.
          action("internal", "ref", "add_context_feed", {
            id: "echoed",
            type: "on_demand",
            source: { type: "tool", name: "echo", params: { of: "$$clock" } },
          }) +
          '<response final="false">updated</response>',
        action("internal", "again", "add_context_feed", clockFeed) +
          action("internal", "rm", "remove_context_feed", { id: "clock" }) +
          "<response>It is $clock.</response>",
      ],
    });
    const make = (store: EventStore, used: Provider, world?: ReplayWorld) =>
      longRunRuntime(store, used, {
        agent,
        internalActionsPolicy: manifest.internalActions,
        feeds: { manifest, clock: { now: () => CLOCK } },
        ...(world ? { world } : {}),
      });
    const { result, events, report } = await runAndReplay(make, provider);

    expect(result.status).toBe("completed");
    // The feed added in step 0 is in step 1's context and its $clock; the update shows in step 2.
    const contexts = provider.requests.map((request: ProviderRequest) =>
      JSON.stringify(request.messages),
    );
    expect(contexts[0]).not.toContain("context_feed");
    expect(contexts[1]).toContain('<context_feed id=\\"clock\\">');
    expect(contexts[1]).toContain(String(CLOCK / 1000));
    expect(contexts[2]).toContain("2026-11-23T08:00:00Z");
    // A value that is not a JSON object or array is its text.
    expect(echo.calls).toEqual([{ at: String(CLOCK / 1000) }, { of: "2026-11-23T08:00:00Z" }]);
    const echoed = data(events, "feed.added").find((item) => item.feed_id === "echoed");
    expect(echoed?.definition).toMatchObject({ source: { params: { of: "$clock" } } });
    expect(result.result).toBe("It is 2026-11-23T08:00:00Z.");

    // Each change sits on the step of the action that made it.
    const added = events.find((event) => event.type === "feed.added")!;
    expect(added.stream).toEqual({ kind: "step", id: expect.stringMatching(/:0$/) });
    expect(added.data).toMatchObject({ feed_id: "clock", by: "action", action_id: "add" });
    expect(data(events, "feed.updated")).toEqual([
      expect.objectContaining({ feed_id: "clock", by: "action", action_id: "upd" }),
    ]);
    // A second add of the id fails; remove_context_feed is not on the allow-list.
    const failed = data(events, "action.failed").find((item) => item.action_id === "again");
    expect(failed?.error.code).toBe("feed.duplicate");
    const skipped = data(events, "action.skipped").find((item) => item.action_id === "rm");
    expect(skipped).toMatchObject({ reason: "not-allowed" });
    expect(data(events, "feed.removed")).toEqual([]);

    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });
});

const COUNT = `name: count
steps:
  - { id: first, action: { type: tool, name: tally, parameters: {} } }
output: $steps.first
`;

/** Requests without a system prompt are the `llm` source's; the rest the foreground's. */
function routed(foreground: Provider, llm: Provider): Provider {
  return {
    name: "scripted",
    format: "scripted",
    stream: (request, options) =>
      (request.system === undefined ? llm : foreground).stream(request, options),
  };
}

describe("relic, llm and workflow feed sources", () => {
  const manifest = parseFeedManifest(`
context_feeds:
  - id: note
    type: on_demand
    source: { type: relic, name: kv.get, params: { key: note } }
  - id: gist
    type: on_demand
    source: { type: llm, name: summarize, params: { prompt: "Say hi" } }
  - id: tally
    type: on_demand
    source: { type: workflow, name: count, params: {} }
`);

  function setup(permits: AgentSpec["permits"]) {
    let count = 0;
    const tally = defineTool({
      name: "tally",
      description: "Counts its calls.",
      parameters: z.object({}),
      execute: () => ({ n: ++count }),
    });
    const agent = longRunAgent({ tools: [tally], permits });
    const workflow = parseWorkflow(COUNT, { source: "count.yaml" });
    const llm = createScriptedProvider({ model: SMALL_MODEL, loop: true, script: ["hi there"] });
    const make = (
      store: EventStore,
      used: Provider,
      world?: ReplayWorld,
      extra: Partial<AgentRuntimeOptions> = {},
    ) => {
      const host = createRelicHost({ store, continuity, relics: [createKvRelic()] });
      return longRunRuntime(store, used, {
        agent,
        executors: [createRelicExecutor(host)],
        stepExecutors: (scope) => [
          createWorkflowExecutor({
            store,
            continuity,
            step: scope.step,
            loadWorkflow: async () => workflow,
            names: () => ["count"],
            run: (call) => scope.runAction(call),
            timeouts: "run",
          }),
        ],
        feeds: { manifest },
        ...extra,
        ...(world ? { world } : {}),
      });
    };
    return { make, llm, calls: () => count };
  }

  it("reads each through the action path on the feed's own step, and replay reads none", async () => {
    const { make, llm, calls } = setup(() => true);
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        `${action("relic", "s1", "kv.set", { key: "note", value: "hello" })}<response final="false">saved</response>`,
        "<response>$note.value, $gist, $tally.n</response>",
      ],
    });
    const { result, events, report } = await runAndReplay(
      (store, used, world) => make(store, used, world),
      routed(foreground, llm),
    );

    expect(result.status).toBe("completed");
    // Step 1 read the note the model stored in step 0, the llm's answer and the workflow's output.
    expect(result.result).toBe("hello, hi there, 2");
    const reads = data(events, "action.dispatched").filter((item) => item.action_id !== "s1");
    const streams = events
      .filter((event) => event.type === "action.dispatched")
      .map((event) => event.stream.id);
    for (const feed of ["note", "gist", "tally"]) expect(streams).toContain(`feed@${feed}`);
    expect(new Set(reads.map((item) => item.type))).toEqual(
      new Set(["relic", "llm", "workflow", "tool"]),
    );
    // The workflow's graph and its inner tool action sit under the feed's step too.
    const graph = events.find((event) => event.type === "graph.started")!;
    expect(graph.stream.id.startsWith("feed@tally:")).toBe(true);
    expect(calls()).toBe(2);

    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(report.reached).toEqual([]);
    expect(calls()).toBe(2);
  });

  it("refuses a source the directive does not permit: the feed is unavailable and nothing runs", async () => {
    const { make, llm } = setup((type) => type !== "relic");
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      script: ["<response>$note</response>"],
    });
    const { result, events, report } = await runAndReplay(
      (store, used, world) => make(store, used, world),
      routed(foreground, llm),
    );

    expect(result.result).toBe("$note");
    const failed = data(events, "feed.failed").find((item) => item.feed_id === "note");
    expect(failed?.error.code).toBe("action.not-allowed");
    expect(data(events, "context.feeds")[0]?.text).toContain(
      '<context_feed id="note" status="unavailable" error="action.not-allowed">',
    );
    expect(events.some((event) => event.type === "relic.called")).toBe(false);
    expect(report.identical).toBe(true);
  });
  it("closes the reads a crash cut off as interrupted when the feeds start again, and replays identical", async () => {
    const { make, llm } = setup(() => true);
    const script = () =>
      createScriptedProvider({
        model: SMALL_MODEL,
        loop: true,
        script: ["<response>ok</response>"],
      });
    // The process dies as the first feed read (an `r<head>-<n>` action) ends.
    const dying = dyingAt(temp.store, "action.succeeded", (item) =>
      /^r\d+-\d+$/.test((item as { action_id?: string }).action_id ?? ""),
    );
    const crashed = make(dying.store, routed(script(), llm));
    void crashed.submit(continuity, { text: "go", actor: "ada", origin: "t" }).catch(() => {});
    await dying.died;
    await temp.store.flush();
    const before = await readAll(temp.store, continuity);
    const open = before.filter(
      (event) =>
        event.type === "action.dispatched" &&
        event.stream.id.startsWith("feed@") &&
        !before.some(
          (end) =>
            end.type === "action.succeeded" &&
            end.stream.id === event.stream.id &&
            (end.data as { action_id: string }).action_id ===
              (event.data as { action_id: string }).action_id,
        ),
    );
    expect(open.length).toBeGreaterThan(0);

    const restarted = make(temp.store, routed(script(), llm));
    await restarted.resume(continuity);
    await restarted.close();
    const events = await readAll(temp.store, continuity);
    const interrupted = events.filter((event) => event.type === "action.interrupted");
    expect(
      interrupted.map(
        (event) => `${event.stream.id}#${(event.data as { action_id: string }).action_id}`,
      ),
    ).toEqual(
      expect.arrayContaining(
        open.map(
          (event) => `${event.stream.id}#${(event.data as { action_id: string }).action_id}`,
        ),
      ),
    );
    expect(data(events, "run.completed").at(-1)).toMatchObject({ status: "completed" });

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store, world }) => make(store, world.provider, world),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });
});
