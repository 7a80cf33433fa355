import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { type AgentSpec, createAgentRuntime } from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { readAll, tempStore, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-tasks-");

/**
 * A side-effecting tool (its calls queue behind each other) whose calls wait until the test
 * releases them by key; a key released before its call arrives ends as soon as it does.
 */
function gatedTool() {
  const gates = new Map<string, (value: string) => void>();
  const early = new Set<string>();
  const arrived = new Map<string, () => void>();
  const arrivals = new Map<string, Promise<void>>();
  const arrival = (key: string) => {
    let found = arrivals.get(key);
    if (!found) {
      found = new Promise<void>((resolve) => arrived.set(key, resolve));
      arrivals.set(key, found);
    }
    return found;
  };
  const tool = defineTool({
    name: "work",
    description: "Works until released.",
    parameters: z.object({ key: z.string() }),
    sideEffects: true,
    execute: ({ key }, { signal }) =>
      new Promise<string>((resolve, reject) => {
        gates.set(key, resolve);
        if (early.has(key)) resolve(`done ${key}`);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        void arrival(key);
        arrived.get(key)?.();
      }),
  });
  return {
    tool,
    arrival,
    release(key: string) {
      early.add(key);
      gates.get(key)?.(`done ${key}`);
    },
  };
}

function agent(tool: AgentSpec["tools"][number]): AgentSpec {
  return {
    directive: "tester",
    instructions: "Test things.",
    model: "claude-sonnet-4-5",
    limits: {},
    permits: () => true,
    tools: [tool],
    nativeTools: false,
  };
}

const task = (key: string) =>
  `<action type="tool" mode="fire_and_forget" id="${key}">{"name":"work","parameters":{"key":"${key}"}}</action>`;

const taskEvents = (events: SpoolEvent[], key: string) =>
  events.filter((event) => event.stream.kind === "task" && event.stream.id.endsWith(`:${key}`));

const TERMINAL = new Set([
  "action.succeeded",
  "action.failed",
  "action.cancelled",
  "action.interrupted",
]);

describe("tasks outlive their step and run", () => {
  it("a fire_and_forget tool still running at the final response has its result logged after run.completed", async () => {
    const work = gatedTool();
    const runtime = createAgentRuntime({
      store: temp.store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: [`${task("slow")}<response>done</response>`],
      }),
      agent: agent(work.tool),
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    await work.arrival("slow");
    work.release("slow");
    await runtime.settled(continuity);
    await runtime.close();

    const events = await readAll(temp.store, continuity);
    const completed = events.find((event) => event.type === "run.completed")!;
    const lifecycle = taskEvents(events, "slow");
    expect(lifecycle.map((event) => event.type)).toEqual([
      "action.dispatched",
      "action.started",
      "action.succeeded",
    ]);
    expect(lifecycle.at(-1)!.seq).toBeGreaterThan(completed.seq);
    expect(lifecycle.at(-1)!.data).toMatchObject({ output: "done slow" });
    expect(await replayed(temp.store, work.tool)).toBeUndefined();
  });

  it("a task still running when the runtime closes is cancelled and logged, not dropped", async () => {
    const work = gatedTool();
    const runtime = createAgentRuntime({
      store: temp.store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: [`${task("forever")}<response>done</response>`],
      }),
      agent: agent(work.tool),
    });
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    await work.arrival("forever");
    await runtime.close();
    const lifecycle = taskEvents(await readAll(temp.store, continuity), "forever");
    expect(lifecycle.map((event) => event.type)).toEqual([
      "action.dispatched",
      "action.started",
      "action.cancelled",
    ]);
    expect(lifecycle.at(-1)!.data).toMatchObject({ reason: "the runtime closed" });
  });

  it("property: whichever tasks end before close, every task has its intent and exactly one end in the log", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (released, waitFirst) => {
          const { store, cleanup } = await tempStore("spool-tasks-prop-");
          try {
            await runTasks(store, released, waitFirst);
          } finally {
            await cleanup();
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it("recovery surfaces a task a crash cut off as interrupted, after the run had completed", async () => {
    const work = gatedTool();
    const crashed = createAgentRuntime({
      store: temp.store,
      provider: createScriptedProvider({
        model: "claude-sonnet-4-5",
        script: [`${task("cut")}<response>done</response>`],
      }),
      agent: agent(work.tool),
    });
    await crashed.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    await work.arrival("cut");
    // The first runtime is never closed: as far as the log knows, its process died here.
    const restarted = createAgentRuntime({
      store: temp.store,
      provider: createScriptedProvider({ model: "claude-sonnet-4-5", script: [] }),
      agent: agent(work.tool),
    });
    expect(await restarted.resume(continuity)).toEqual([]);
    await restarted.close();
    const events = await readAll(temp.store, continuity);
    const recovery = events.find((event) => event.type === "recovery.started")!;
    expect(recovery.data).toMatchObject({ open_runs: [] });
    expect((recovery.data as { open_tasks: string[] }).open_tasks).toHaveLength(1);
    const lifecycle = taskEvents(events, "cut");
    expect(lifecycle.map((event) => event.type)).toEqual([
      "action.dispatched",
      "action.started",
      "action.interrupted",
    ]);
    expect(lifecycle.at(-1)!.data).toMatchObject({ dispatched: true, rerun: false });
    // A second restart logs that it took the continuity up, and finds nothing left to recover.
    const again = createAgentRuntime({
      store: temp.store,
      provider: createScriptedProvider({ model: "claude-sonnet-4-5", script: [] }),
      agent: agent(work.tool),
    });
    await again.resume(continuity);
    await again.close();
    const added = (await readAll(temp.store, continuity)).slice(events.length);
    expect(added.map((event) => [event.type, event.data])).toEqual([
      ["recovery.started", { open_runs: [], waiting_turns: 0 }],
      ["runtime.closed", { reason: "the runtime closed", tasks: [] }],
    ]);
    // Replay re-enacts each restart at its `recovery.started` and re-derives the interruption.
    expect(await replayed(temp.store, work.tool)).toBeUndefined();
  });
});

/** Replays the continuity; the first difference, or undefined when identical. */
async function replayed(store: EventStore, tool: AgentSpec["tools"][number]) {
  const report = await replayContinuity({
    source: store,
    continuity,
    stallMs: 5000,
    makeRuntime: ({ store: target, provider, intercept }) =>
      createAgentRuntime({ store: target, provider, agent: agent(tool), intercept }),
  });
  return report.difference;
}

/** One run dispatching a task per entry of `released`; those marked true end before close. */
async function runTasks(store: EventStore, released: boolean[], waitFirst: boolean) {
  const work = gatedTool();
  const keys = released.map((_, i) => `t${i}`);
  const runtime = createAgentRuntime({
    store,
    provider: createScriptedProvider({
      model: "claude-sonnet-4-5",
      script: [`${keys.map(task).join("")}<response>done</response>`],
    }),
    agent: agent(work.tool),
  });
  await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
  // The first task runs; the others wait their turn behind it (side effects queue).
  await work.arrival(keys[0]!);
  for (const [i, key] of keys.entries()) if (released[i]) work.release(key);
  if (waitFirst && released.every(Boolean)) await runtime.settled(continuity);
  await runtime.close();
  const events = await readAll(store, continuity);
  for (const [i, key] of keys.entries()) {
    const lifecycle = taskEvents(events, key);
    expect(lifecycle[0]?.type).toBe("action.dispatched");
    const ends = lifecycle.filter((event) => TERMINAL.has(event.type));
    expect(ends).toHaveLength(1);
    if (!released[i]) expect(ends[0]!.type).toBe("action.cancelled");
    else expect(["action.succeeded", "action.cancelled"]).toContain(ends[0]!.type);
    if (waitFirst && released.every(Boolean)) expect(ends[0]!.type).toBe("action.succeeded");
  }
}
