/**
 * A workflow's steps take the one action path (issue: every effect goes through the scheduler):
 * each inner action's intent is logged before it runs, the directive's permissions refuse what
 * it does not allow, side effects wait their turn in the continuity's serial queue (beside the
 * model's own), and replay runs the workflow again in its closed world, serving the inner actions
 * from the log, so it is identical and the side effect is not repeated.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyTool, defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { type ReplayWorld, replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, AgentSpec } from "../src/runtime/index.js";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import { createWorkflowExecutor, parseWorkflow } from "../src/workflows/index.js";
import { longRunAgent, longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { dyingAt } from "./support/dying-store.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-workflow-actions-");

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);
const actionId = (event: SpoolEvent) => (event.data as { action_id?: string }).action_id;

/** `append`: a side-effecting tool that appends a line to `notes.txt`; its calls are counted. */
function appendTool(idempotent = false) {
  const calls: string[] = [];
  const tool = defineTool({
    name: "append",
    description: "Appends a line to the notes.",
    parameters: z.object({ text: z.string() }),
    sideEffects: true,
    idempotent,
    execute: ({ text }) => {
      calls.push(text);
      appendFileSync(join(temp.dir, "notes.txt"), `${text}\n`);
      return { appended: text };
    },
  });
  return { tool, calls, notes: () => readFileSync(join(temp.dir, "notes.txt"), "utf8") };
}

/**
 * The runtime as `assembleAgent` wires it: the workflow executor of each step runs its steps'
 * actions through `scope.runAction`. `world` is replay's closed world.
 */
function runtimeWith(
  store: EventStore,
  provider: Provider,
  agent: AgentSpec,
  workflows: string[],
  world?: ReplayWorld,
  extra: Partial<AgentRuntimeOptions> = {},
) {
  const definitions = new Map(
    workflows.map((yaml) => {
      const definition = parseWorkflow(yaml, { source: "test.yaml" });
      return [definition.name, definition] as const;
    }),
  );
  return longRunRuntime(store, provider, {
    agent,
    stepExecutors: (scope) => [
      createWorkflowExecutor({
        store,
        continuity,
        step: scope.step,
        loadWorkflow: (name) => definitions.get(name)!,
        names: () => [...definitions.keys()],
        run: (call) => scope.runAction(call),
        timeouts: "run",
        backoff: { baseMs: 1, maxMs: 1 },
      }),
    ],
    ...extra,
    provider,
    ...(world ? { world } : {}),
  });
}

/** Runs `script` as one turn, then replays the continuity in its closed world. */
async function runAndReplay(
  agent: AgentSpec,
  workflows: string[],
  script: string[],
  extra: Partial<AgentRuntimeOptions> = {},
) {
  const scripted = createScriptedProvider({ model: SMALL_MODEL, script });
  const provider = extra.provider ?? scripted;
  const runtime = runtimeWith(temp.store, provider, agent, workflows, undefined, extra);
  const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
  await runtime.settled(continuity);
  await runtime.close();
  const events = await readAll(temp.store, continuity);
  const replay = () =>
    replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store, world }) =>
        runtimeWith(store, world.provider, agent, workflows, world, extra),
    });
  return { result, events, replay, requests: scripted.requests };
}

const NOTES = `name: notes
inputs: { lines: { type: array } }
steps:
  - { id: first, action: { type: tool, name: append, parameters: { text: start } } }
  - id: each
    depends: [first]
    foreach: $inputs.lines
    concurrency: 2
    action: { type: tool, name: append, parameters: { text: $item } }
output: $steps.each
`;

const runNotes = (lines: string[]) =>
  `<action type="workflow" mode="sync" id="w1">${JSON.stringify({ name: "notes", parameters: { lines } })}</action><response final="false">writing</response>`;

describe("a workflow's steps take the model's action path", () => {
  it("runs each inner action once, its intent durable first, and replay serves it from the log", async () => {
    const append = appendTool();
    const agent = longRunAgent({ tools: [append.tool] });
    const { result, events, replay, requests } = await runAndReplay(
      agent,
      [NOTES],
      [runNotes(["a", "b"]), "<response>done</response>"],
    );
    expect(result.status).toBe("completed");
    expect(append.calls.sort()).toEqual(["a", "b", "start"]);
    const notes = append.notes();
    expect(notes.split("\n").filter(Boolean).sort()).toEqual(["a", "b", "start"]);

    // The graph is the workflow action's task stream; its inner actions a step named like it.
    const graph = events.find((event) => event.type === "graph.started")!.stream.id;
    const inner = events.filter(
      (event) => event.stream.kind === "step" && event.stream.id === graph,
    );
    const ids = ["steps.first", "steps.each.0", "steps.each.1"];
    expect([...new Set(inner.map(actionId))].sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const own = inner.filter((event) => actionId(event) === id).map((event) => event.type);
      expect(own, id).toEqual(["action.dispatched", "action.started", "action.succeeded"]);
    }
    expect(data(events, "action.dispatched").filter((item) => item.name === "append")).toEqual(
      ids.map(() => expect.objectContaining({ type: "tool", mode: "sync" })),
    );
    const succeeded = data(events, "action.succeeded").find((item) => item.action_id === "w1");
    expect(succeeded?.output).toEqual([{ appended: "a" }, { appended: "b" }]);
    // No inner result is taken for the model's: the thread's next step sees only w1's.
    const results = JSON.stringify(requests[1]!.messages.at(-1));
    expect(results).toContain('<result id=\\"w1\\" type=\\"workflow\\"');
    expect(results).not.toContain("steps.");

    const report = await replay();
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, reached: [] });
    // The graph's events were re-derived and compared, not taken as records of the world.
    const graphEvents = events.filter((event) => event.stream.id === graph).length;
    expect(report.compared).toBeGreaterThanOrEqual(graphEvents);
    expect(append.calls).toHaveLength(3);
    expect(append.notes()).toBe(notes);
  });

  it("runs side effects one at a time: two parallel steps and the model's own tool never overlap", async () => {
    const running = new Set<string>();
    const overlaps: string[] = [];
    const expected = ["e1", "steps.left", "steps.right"];
    /** Resolves once every side effect of the test is durably dispatched. */
    const allDispatched = async () => {
      const seen = new Set<string>();
      const stop = new AbortController();
      for await (const message of temp.store.subscribe({
        continuity,
        types: ["action.dispatched"],
        signal: stop.signal,
      })) {
        if (message.type !== "event") continue;
        seen.add(actionId(message.event)!);
        if (expected.every((id) => seen.has(id))) break;
      }
      stop.abort();
    };
    const effect: AnyTool = defineTool({
      name: "effect",
      description: "Changes the world.",
      parameters: z.object({ who: z.string() }),
      sideEffects: true,
      execute: async ({ who }) => {
        running.add(who);
        // From here on, a side effect not queued behind this one would start and be seen.
        await allDispatched();
        for (const other of running) if (other !== who) overlaps.push(`${who} beside ${other}`);
        running.delete(who);
        return { done: who };
      },
    });
    const both = `name: both
steps:
  - { id: left, action: { type: tool, name: effect, parameters: { who: left } } }
  - { id: right, action: { type: tool, name: effect, parameters: { who: right } } }
`;
    const { result, events, replay } = await runAndReplay(
      longRunAgent({ tools: [effect] }),
      [both],
      [
        '<action type="workflow" mode="async" id="w1">{"name":"both","parameters":{}}</action><action type="tool" mode="sync" id="e1">{"name":"effect","parameters":{"who":"model"}}</action><response final="false">working</response>',
        "<response>done</response>",
      ],
    );
    expect(result.status).toBe("completed");
    expect(overlaps).toEqual([]);
    // In log order too: each side effect starts only after the one before it ended.
    const seqOf = (type: string, id: string) =>
      events.find((event) => event.type === type && actionId(event) === id)!.seq;
    const byStart = [...expected].sort(
      (a, b) => seqOf("action.started", a) - seqOf("action.started", b),
    );
    for (let index = 1; index < byStart.length; index++) {
      expect(seqOf("action.started", byStart[index]!)).toBeGreaterThan(
        seqOf("action.succeeded", byStart[index - 1]!),
      );
    }
    const report = await replay();
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });

  it("refuses a tool the directive does not permit through the gate, before anything runs", async () => {
    const append = appendTool();
    const agent = longRunAgent({
      tools: [append.tool],
      permits: (type, name) => !(type === "tool" && name === "append"),
    });
    const { result, events, replay } = await runAndReplay(
      agent,
      [NOTES],
      [runNotes(["a"]), "<response>done</response>"],
    );
    expect(result.status).toBe("completed");
    expect(append.calls).toEqual([]);
    expect(data(events, "action.skipped")).toEqual([
      expect.objectContaining({ action_id: "steps.first", reason: "not-allowed" }),
    ]);
    expect(data(events, "action.skipped")[0]!.message).toContain('may not run tool "append"');
    expect(data(events, "action.dispatched").map((item) => item.action_id)).toEqual(["w1"]);
    const first = events.find(
      (event) =>
        event.type === "step.completed" && (event.data as { node?: string }).node === "first",
    )?.data;
    expect(first).toMatchObject({ status: "failed", error: { code: "action.not-allowed" } });
    expect(data(events, "graph.error")).toEqual([expect.objectContaining({ node: "first" })]);
    const failed = data(events, "action.failed").find((item) => item.action_id === "w1");
    expect(failed?.error.code).toBe("workflow.step-failed");

    const report = await replay();
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });

  it("retries a failed inner action as a new action of its step, and replays it identical", async () => {
    let calls = 0;
    const flaky = defineTool({
      name: "flaky",
      description: "Fails the first time.",
      parameters: z.object({}),
      execute: () => {
        calls += 1;
        if (calls === 1) throw new Error("not yet");
        return "ok";
      },
    });
    const retrying = `name: retrying
steps:
  - { id: a, retry: 2, action: { type: tool, name: flaky, parameters: {} } }
output: $steps.a
`;
    const { events, replay } = await runAndReplay(
      longRunAgent({ tools: [flaky] }),
      [retrying],
      [
        '<action type="workflow" mode="sync" id="w1">{"name":"retrying","parameters":{}}</action><response final="false">trying</response>',
        "<response>done</response>",
      ],
    );
    expect(calls).toBe(2);
    expect(data(events, "action.failed").map((item) => [item.action_id, item.error])).toEqual([
      ["steps.a", { code: "action.error", message: "not yet" }],
    ]);
    expect(data(events, "action.succeeded").map((item) => [item.action_id, item.output])).toEqual([
      ["steps.a@2", "ok"],
      ["w1", "ok"],
    ]);
    const report = await replay();
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(calls).toBe(2);
  });

  it("times an inner action out at its step's timeout_ms, and replays the timeout identical", async () => {
    let calls = 0;
    const stuck = defineTool({
      name: "stuck",
      description: "Waits until it is stopped.",
      parameters: z.object({}),
      execute: (_input, context) => {
        calls += 1;
        return new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(new Error("stopped")));
        });
      },
    });
    const slow = `name: slow
steps:
  - { id: wait, timeout_ms: 20, action: { type: tool, name: stuck, parameters: {} } }
`;
    const { events, replay } = await runAndReplay(
      longRunAgent({ tools: [stuck] }),
      [slow],
      [
        '<action type="workflow" mode="sync" id="w1">{"name":"slow","parameters":{}}</action><response final="false">waiting</response>',
        "<response>done</response>",
      ],
    );
    expect(calls).toBe(1);
    expect(data(events, "action.timed-out")).toEqual([
      expect.objectContaining({ action_id: "steps.wait", timeout_ms: 20, will_retry: false }),
    ]);
    const wait = events.find(
      (event) =>
        event.type === "step.completed" && (event.data as { node?: string }).node === "wait",
    )?.data;
    expect(wait).toMatchObject({ status: "failed", error: { code: "action.timeout" } });
    const failed = data(events, "action.failed").find((item) => item.action_id === "w1");
    expect(failed?.error.message).toContain("ran past its timeout of 20 ms");
    const report = await replay();
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(calls).toBe(1);
  });

  it("runs agent and llm steps too: a child thread and a model task, replayed from the log", async () => {
    const researcher = longRunAgent({ directive: "researcher", instructions: "You research." });
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        '<action type="workflow" mode="sync" id="w1">{"name":"ask","parameters":{}}</action><response final="false">asking</response>',
        "<response>done</response>",
      ],
    });
    const child = createScriptedProvider({
      model: SMALL_MODEL,
      script: ["<response>because</response>"],
    });
    const oneShot = createScriptedProvider({ model: SMALL_MODEL, script: ["briefly, because"] });
    const provider: Provider = {
      name: foreground.name,
      format: foreground.format,
      stream: (request, options) =>
        (request.system === undefined
          ? oneShot
          : request.system.includes("You research.")
            ? child
            : foreground
        ).stream(request, options),
    };
    const ask = `name: ask
steps:
  - { id: why, action: { type: agent, name: researcher, parameters: { question: why } } }
  - { id: brief, depends: [why], action: { type: llm, name: brief, parameters: { prompt: "shorten: $steps.why" } } }
output: $steps.brief
`;
    const { result, events, replay } = await runAndReplay(longRunAgent(), [ask], [], {
      provider,
      agents: {
        get: (name) => (name === "researcher" ? researcher : undefined),
        names: () => ["researcher"],
      },
    });
    expect(result.status).toBe("completed");
    const graph = events.find((event) => event.type === "graph.started")!.stream.id;
    const started = events.find(
      (event) => event.type === "thread.started" && event.stream.id.startsWith(`${graph}@`),
    );
    expect(started?.stream.id).toBe(`${graph}@steps.why`);
    expect(oneShot.requests[0]?.messages).toEqual([{ role: "user", content: "shorten: because" }]);
    const output = data(events, "action.succeeded").find((item) => item.action_id === "w1");
    expect(output?.output).toBe("briefly, because");
    const report = await replay();
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, reached: [] });
  });

  it("after a crash inside a step, closes the inner action without running it again; replay is identical", async () => {
    // Even an idempotent tool is not run again: its workflow is interrupted, nobody takes it.
    const append = appendTool(true);
    const agent = longRunAgent({ tools: [append.tool] });
    const dying = dyingAt(
      temp.store,
      "action.succeeded",
      (item) => (item as { action_id?: string }).action_id === "steps.first",
    );
    const script = (turns: string[]) =>
      createScriptedProvider({ model: SMALL_MODEL, script: turns });
    const crashed = runtimeWith(dying.store, script([runNotes(["a"])]), agent, [NOTES]);
    void crashed.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await dying.died;
    await temp.store.flush();
    expect(append.calls).toEqual(["start"]);

    const restarted = runtimeWith(temp.store, script(["<response>done</response>"]), agent, [
      NOTES,
    ]);
    await restarted.resume(continuity);
    await restarted.close();
    expect(append.calls).toEqual(["start"]);
    expect(append.notes()).toBe("start\n");
    const events = await readAll(temp.store, continuity);
    const graph = events.find((event) => event.type === "graph.started")!.stream.id;
    const interrupted = events.filter((event) => event.type === "action.interrupted");
    expect(interrupted.map((event) => [event.stream.id === graph, actionId(event)])).toEqual(
      expect.arrayContaining([
        [true, "steps.first"],
        [false, "w1"],
      ]),
    );
    expect(interrupted.map((event) => (event.data as { rerun: boolean }).rerun)).toEqual([
      false,
      false,
    ]);
    expect(data(events, "run.completed").at(-1)).toMatchObject({ status: "completed" });

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store, world }) => runtimeWith(store, world.provider, agent, [NOTES], world),
    });
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, recoveries: 1, reached: [] });
    expect(append.calls).toEqual(["start"]);
  });
});
