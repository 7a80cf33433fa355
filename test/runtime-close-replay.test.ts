/**
 * Closing a runtime is a decision, logged as `runtime.closed` before anything is cancelled:
 * a `fire_and_forget` task still running at the close is cancelled after it, the close replays
 * identically (replay closes its runtime at that event and reaches nothing outside), and a later
 * runtime neither reports the cancelled task as interrupted nor runs it again. A close that comes
 * as a run ends (its `run.completed` logged) names no run, as replay finds none open there.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { type ReplayReport, replayContinuity } from "../src/replay/index.js";
import { type AgentSpec, createAgentRuntime, type InterceptedCall } from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-close-replay-");

/**
 * A tool that blocks until its call is aborted, counting its calls; `arrival` resolves once
 * `expected` calls run. Side-effecting by default (its calls then queue behind each other).
 */
function blockingTool(expected = 1, sideEffects = true) {
  const calls: string[] = [];
  let arrived: () => void = () => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const tool = defineTool({
    name: "wait",
    description: "Waits until cancelled.",
    parameters: z.object({ key: z.string() }),
    sideEffects,
    execute: ({ key }, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        calls.push(key);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        if (calls.length === expected) arrived();
      }),
  });
  return { tool, calls, arrival };
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

const action = (id: string, mode: "fire_and_forget" | "sync") =>
  `<action type="tool" mode="${mode}" id="${id}">{"name":"wait","parameters":{"key":"${id}"}}</action>`;

const scripted = (script: string[]): Provider =>
  createScriptedProvider({ model: "claude-sonnet-4-5", script });

async function replay(
  store: EventStore,
  tool: AgentSpec["tools"][number],
): Promise<{ report: ReplayReport; intercepted: InterceptedCall[] }> {
  const intercepted: InterceptedCall[] = [];
  const report = await replayContinuity({
    source: store,
    continuity,
    stallMs: 5000,
    makeRuntime: ({ store: target, provider, intercept }) =>
      createAgentRuntime({
        store: target,
        provider,
        agent: agent(tool),
        intercept: (call) => {
          intercepted.push(call);
          return intercept(call);
        },
      }),
  });
  return { report, intercepted };
}

const of = (events: SpoolEvent[], type: string) => events.filter((event) => event.type === type);

describe("closing a runtime while a fire_and_forget task runs", () => {
  it("logs runtime.closed before the task's cancel, and replays identically", async () => {
    const blocking = blockingTool();
    const runtime = createAgentRuntime({
      store: temp.store,
      provider: scripted([`${action("bg", "fire_and_forget")}<response>started</response>`]),
      agent: agent(blocking.tool),
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    await blocking.arrival;
    await runtime.close();
    // A second close is the first one: nothing more is logged.
    await runtime.close();

    const events = await readAll(temp.store, continuity);
    expect(of(events, "runtime.closed")).toHaveLength(1);
    const [closed] = of(events, "runtime.closed");
    const [cancelled] = of(events, "action.cancelled");
    expect(closed).toBeDefined();
    expect(cancelled).toBeDefined();
    expect(closed!.data).toEqual({ reason: "the runtime closed", tasks: [cancelled!.stream.id] });
    expect(closed!.seq).toBeGreaterThan(of(events, "run.completed")[0]!.seq);
    expect(closed!.seq).toBeLessThan(cancelled!.seq);

    const { report, intercepted } = await replay(temp.store, blocking.tool);
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, closes: 1, reached: [] });
    // The task was dispatched again in replay and answered from the log, never run.
    expect(intercepted.map((call) => call.actionId)).toEqual(["bg"]);
    expect(blocking.calls).toEqual(["bg"]);
  });

  it("is not reported interrupted or run again by the runtime that takes the continuity up", async () => {
    const blocking = blockingTool();
    const first = createAgentRuntime({
      store: temp.store,
      provider: scripted([`${action("bg", "fire_and_forget")}<response>started</response>`]),
      agent: agent(blocking.tool),
    });
    await first.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    await blocking.arrival;
    await first.close();
    const before = (await readAll(temp.store, continuity)).length;

    const second = createAgentRuntime({
      store: temp.store,
      provider: scripted(["<response>again</response>"]),
      agent: agent(blocking.tool),
    });
    expect(await second.resume(continuity)).toEqual([]);
    await second.submit(continuity, { text: "more", actor: "ada", origin: "test" });
    await second.close();

    const events = await readAll(temp.store, continuity);
    const added = events.slice(before);
    expect(added[0]).toMatchObject({
      type: "recovery.started",
      data: { open_runs: [], waiting_turns: 0 },
    });
    expect(added[0]!.data).not.toHaveProperty("open_tasks");
    expect(of(events, "action.interrupted")).toEqual([]);
    expect(of(events, "action.dispatched")).toHaveLength(1);
    expect(blocking.calls).toEqual(["bg"]);
    expect(of(events, "runtime.closed")).toHaveLength(2);

    const { report } = await replay(temp.store, blocking.tool);
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, closes: 2, recoveries: 1, reached: [] });
  });

  it("names no run when the close comes as the run ends (its run.completed is logged), and replays identically", async () => {
    const blocking = blockingTool();
    let closing: Promise<void> | undefined;
    const runtime = createAgentRuntime({
      store: temp.store,
      provider: scripted(["<response>done</response>"]),
      agent: agent(blocking.tool),
      // The run's end is logged and the run has not returned yet: a close from outside lands here.
      observer: (notice) => {
        if (notice.type === "run-ended") closing = runtime.close();
      },
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    await closing;

    const events = await readAll(temp.store, continuity);
    const [closed] = of(events, "runtime.closed");
    expect(closed!.data).toEqual({ reason: "the runtime closed", tasks: [] });
    expect(closed!.seq).toBeGreaterThan(of(events, "run.completed")[0]!.seq);
    const { report } = await replay(temp.store, blocking.tool);
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, closes: 1, reached: [] });
  });

  it("replays a close that cancels the running run beside a task", async () => {
    // Both calls run at once: the run waits on its sync action when the close comes.
    const blocking = blockingTool(2, false);
    const runtime = createAgentRuntime({
      store: temp.store,
      provider: scripted([
        `${action("bg", "fire_and_forget")}${action("fg", "sync")}<response>never</response>`,
      ]),
      agent: agent(blocking.tool),
    });
    const run = runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    await blocking.arrival;
    await runtime.close();
    expect((await run).status).toBe("cancelled");

    const events = await readAll(temp.store, continuity);
    const [closed] = of(events, "runtime.closed");
    expect(closed!.data).toMatchObject({ reason: "the runtime closed", run: expect.any(String) });
    expect((closed!.data as { tasks: string[] }).tasks).toHaveLength(1);
    const cancels = of(events, "action.cancelled");
    expect(
      cancels.map((cancel) => (cancel.data as { action_id: string }).action_id).sort(),
    ).toEqual(["bg", "fg"]);
    for (const cancel of cancels) expect(cancel.seq).toBeGreaterThan(closed!.seq);
    const { report } = await replay(temp.store, blocking.tool);
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, closes: 1, reached: [] });
  });
});
