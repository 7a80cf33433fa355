import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyTool, defineTool } from "../src/actions/index.js";
import { type HookEntry, layerHooks, parseHookFile } from "../src/hooks/index.js";
import { createScriptedProvider, type ScriptedTurn } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { builtinHooks } from "../src/runtime/builtin-hooks.js";
import type { AgentRuntime, AgentRuntimeOptions } from "../src/runtime/index.js";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import { longRunAgent, longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-thread-stops-");

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);

/** Project hooks that note the thread events named, with the event's reason. */
function noting(...events: string[]): HookEntry[] {
  const yaml = events
    .map(
      (event) => `
- id: note_${event.replace(".", "_")}
  event: ${event}
  action:
    primary: execute
    item_type: tool
    item_id: note
    params: { text: "${event} of \${event.thread}: \${event.reason}" }
`,
    )
    .join("");
  const project = parseHookFile(yaml, { path: "/w/.ai/hooks/project.yaml", tier: "project" });
  return layerHooks([...builtinHooks(), ...project]).hooks;
}

/** A `note` tool that keeps what it was given. */
function noteTool() {
  const notes: string[] = [];
  const tool = defineTool({
    name: "note",
    description: "Notes a line.",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      notes.push(text);
      return { noted: text };
    },
  });
  return { tool, notes };
}

/**
 * A `wait` tool that announces it was called (`entered`) and holds until its call is cancelled:
 * the test acts on the running step from there, without guessing at time.
 */
function waitTool() {
  let entered: () => void = () => {};
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const tool = defineTool({
    name: "wait",
    description: "Waits until cancelled.",
    parameters: z.object({}),
    execute: (_input, context) => {
      entered();
      return new Promise((_resolve, reject) => {
        const stop = () => reject(new Error("cancelled"));
        if (context.signal.aborted) stop();
        else context.signal.addEventListener("abort", stop, { once: true });
      });
    },
  });
  return { tool, inside };
}

function runtime(
  script: ScriptedTurn[],
  tools: AnyTool[],
  hooks: HookEntry[],
  extra: Partial<AgentRuntimeOptions> = {},
): AgentRuntime {
  return longRunRuntime(
    temp.store,
    createScriptedProvider({ model: SMALL_MODEL, script, loop: true }),
    { agent: longRunAgent({ tools, limits: { maxTurns: 2 } }), hooks, ...extra },
  );
}

const WAIT = `<action type="tool" mode="sync" id="w1">{"name":"wait","parameters":{}}</action><response>waited</response>`;

/** The thread-stream events of `thread` from `types`, in log order. */
function lifecycle(events: SpoolEvent[], thread: string, types: readonly string[]) {
  return events
    .filter((event) => event.stream.id === thread && types.includes(event.type))
    .map((event) => event.type);
}

const LIFECYCLE = [
  "thread.started",
  "run.started",
  "run.completed",
  "thread.suspended",
  "thread.cancelled",
  "thread.resumed",
];

describe("thread.suspended and thread.cancelled", () => {
  it("suspends the thread of a run that stops at a limit, fires its hooks, and resumes it on the next turn", async () => {
    const { tool, notes } = noteTool();
    const hooks = noting("thread.suspended");
    const script = ['<response final="false">more</response>'];
    const first = runtime(script, [tool], hooks);
    const stopped = await first.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    expect(stopped.status).toBe("limit");
    const again = await first.submit(continuity, { text: "go on", actor: "ada", origin: "t" });
    await first.close();
    expect(again.thread).toBe(stopped.thread);

    const events = await readAll(temp.store, continuity);
    expect(lifecycle(events, stopped.thread, LIFECYCLE)).toEqual([
      "thread.started",
      "run.started",
      "run.completed",
      "thread.suspended",
      "thread.resumed",
      "run.started",
      "run.completed",
      "thread.suspended",
    ]);
    expect(data(events, "thread.suspended")[0]!.reason).toContain("limit");
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain(`thread.suspended of ${stopped.thread}: the run reached a limit`);
    expect(
      data(events, "hook.fired").filter((item) => item.event === "thread.suspended"),
    ).toHaveLength(2);

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store, provider, intercept, recordedFeeds }) =>
        longRunRuntime(store, provider, {
          agent: longRunAgent({ tools: [tool], limits: { maxTurns: 2 } }),
          hooks,
          intercept,
          recordedFeeds,
        }),
    });
    expect(report.difference).toBeUndefined();
    expect(notes).toHaveLength(2);
  });

  it("cancels the thread of a run stopped on request, fires its hooks, and goes on in it", async () => {
    const { tool, notes } = noteTool();
    const waiting = waitTool();
    const hooks = noting("thread.cancelled", "thread.suspended");
    const agent = runtime([WAIT, "<response>ok</response>"], [tool, waiting.tool], hooks);
    const run = agent.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await waiting.inside;
    agent.cancel(continuity, "cancelled with Ctrl-C");
    const cancelled = await run;
    expect(cancelled.status).toBe("cancelled");
    const next = await agent.submit(continuity, { text: "again", actor: "ada", origin: "t" });
    await agent.close();
    expect(next.status).toBe("completed");
    expect(next.thread).toBe(cancelled.thread);

    const events = await readAll(temp.store, continuity);
    expect(lifecycle(events, cancelled.thread, LIFECYCLE)).toEqual([
      "thread.started",
      "run.started",
      "run.completed",
      "thread.cancelled",
      "thread.resumed",
      "run.started",
      "run.completed",
    ]);
    expect(data(events, "thread.cancelled")).toEqual([{ reason: "cancelled with Ctrl-C" }]);
    expect(notes).toEqual([`thread.cancelled of ${cancelled.thread}: cancelled with Ctrl-C`]);
  });

  it("cancels the thread of a run a new turn interrupts, and runs that turn in it", async () => {
    const { tool, notes } = noteTool();
    const waiting = waitTool();
    const hooks = noting("thread.cancelled");
    const agent = runtime([WAIT, "<response>ok</response>"], [tool, waiting.tool], hooks, {
      concurrency: "interrupt",
    });
    const run = agent.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await waiting.inside;
    const next = await agent.submit(continuity, { text: "no, this", actor: "ada", origin: "t" });
    const cancelled = await run;
    await agent.close();
    expect(cancelled.status).toBe("cancelled");
    expect(next.thread).toBe(cancelled.thread);
    const events = await readAll(temp.store, continuity);
    const reasons = data(events, "thread.cancelled").map((item) => item.reason);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^interrupted by a new turn/);
    expect(notes).toEqual([`thread.cancelled of ${cancelled.thread}: ${reasons[0]}`]);
    expect(lifecycle(events, cancelled.thread, ["thread.cancelled", "thread.resumed"])).toEqual([
      "thread.cancelled",
      "thread.resumed",
    ]);
  });
});
