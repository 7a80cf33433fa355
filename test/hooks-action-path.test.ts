import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyTool, defineTool } from "../src/actions/index.js";
import { type HookEntry, layerHooks, parseHookFile } from "../src/hooks/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { builtinHooks } from "../src/runtime/builtin-hooks.js";
import type { AgentRuntimeOptions, AgentSpec } from "../src/runtime/index.js";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import { builtinTools } from "../src/tools/index.js";
import { longRunAgent, longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { dyingAt } from "./support/dying-store.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-hook-actions-");
let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "spool-hook-workspace-"));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);

/** The built-in hooks with one project hook that runs `tool` with `params` after a run. */
function hookRunning(tool: string, params: Record<string, unknown>): HookEntry[] {
  const yaml = `
- id: after_run
  event: after_complete
  action:
    primary: execute
    item_type: tool
    item_id: ${tool}
    params: ${JSON.stringify(params)}
`;
  const project = parseHookFile(yaml, { path: "/w/.ai/hooks/project.yaml", tier: "project" });
  return layerHooks([...builtinHooks(), ...project]).hooks;
}

function tools(clock: () => Date = () => new Date("2026-01-02T03:04:05Z")): AnyTool[] {
  return builtinTools({ workspace, clock, timezone: "UTC" });
}

/** The built-in tools, with every call of `fs.write` counted and its end awaitable. */
function countedTools() {
  const calls: Promise<unknown>[] = [];
  const counted = tools().map((tool): AnyTool => {
    if (tool.name !== "fs.write") return tool;
    return {
      ...tool,
      execute: (input, context) => {
        const call = Promise.resolve(tool.execute(input, context));
        calls.push(call.catch(() => undefined));
        return call;
      },
    };
  });
  return { tools: counted, calls };
}

function provider(): Provider {
  return createScriptedProvider({
    model: SMALL_MODEL,
    script: ["<response>Done.</response>"],
    loop: true,
  });
}

function runtimeOver(
  store: EventStore,
  replayed: Provider,
  agent: AgentSpec,
  hooks: HookEntry[],
  extra: Partial<AgentRuntimeOptions> = {},
) {
  return longRunRuntime(store, replayed, { agent, hooks, ...extra });
}

async function replay(agent: AgentSpec, hooks: HookEntry[]) {
  return replayContinuity({
    source: temp.store,
    continuity,
    makeRuntime: ({ store, provider: replayed, intercept, recordedFeeds }) =>
      runtimeOver(store, replayed, agent, hooks, { intercept, recordedFeeds }),
  });
}

/** The events of a hook's action stream (`<thread>@hook<n>`), of every kind. */
function hookStream(events: SpoolEvent[], worker: string) {
  return events.filter((event) => event.stream.id === worker);
}

describe("a hook's tool takes the model's action path", () => {
  it("logs its intent first, and replay serves its result instead of writing the file again", async () => {
    const hooks = hookRunning("fs.write", { path: "log.txt", content: "ran\n", mode: "append" });
    const agent = longRunAgent({ tools: tools() });
    const runtime = runtimeOver(temp.store, provider(), agent, hooks);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await runtime.close();
    expect(await readFile(path.join(workspace, "log.txt"), "utf8")).toBe("ran\n");

    const events = await readAll(temp.store, continuity);
    const fired = data(events, "hook.fired").find((item) => item.hook === "after_run");
    expect(fired?.worker).toMatch(/@hook1$/);
    const worker = fired!.worker!;
    expect(hookStream(events, worker).map((event) => `${event.stream.kind}:${event.type}`)).toEqual(
      [
        "step:action.dispatched",
        "step:action.started",
        "step:action.succeeded",
        "worker:hook.completed",
      ],
    );
    const dispatched = data(events, "action.dispatched").find((item) => item.name === "fs.write");
    expect(dispatched).toMatchObject({
      type: "tool",
      mode: "sync",
      parameters: { mode: "append" },
    });

    const report = await replay(agent, hooks);
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(await readFile(path.join(workspace, "log.txt"), "utf8")).toBe("ran\n");
  });

  it("replays a hook that reads the clock as identical, whatever the clock says now", async () => {
    const hooks = hookRunning("clock.now", {});
    const recorded = longRunAgent({ tools: tools(() => new Date("2026-01-02T03:04:05Z")) });
    const runtime = runtimeOver(temp.store, provider(), recorded, hooks);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    const done = data(events, "hook.completed").find((item) => item.hook === "after_run");
    expect(done?.detail).toContain("2026-01-02T03:04:05");

    const later = longRunAgent({ tools: tools(() => new Date("2031-07-08T09:10:11Z")) });
    const report = await replay(later, hooks);
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });

  it("skips a hook's tool the directive does not permit, logged as not-allowed", async () => {
    const hooks = hookRunning("fs.write", { path: "log.txt", content: "ran\n", mode: "append" });
    const agent = longRunAgent({
      tools: tools(),
      permits: (type, name) => !(type === "tool" && name === "fs.write"),
    });
    const runtime = runtimeOver(temp.store, provider(), agent, hooks);
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result.status).toBe("completed");
    await expect(readFile(path.join(workspace, "log.txt"), "utf8")).rejects.toThrow(/ENOENT/);
    const events = await readAll(temp.store, continuity);
    const skipped = data(events, "action.skipped");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ action_id: "hook", reason: "not-allowed" });
    expect(skipped[0]!.message).toContain("fs.write");
    expect(data(events, "action.dispatched")).toEqual([]);
    const failed = data(events, "hook.failed").find((item) => item.hook === "after_run");
    expect(failed?.error.code).toBe("action.not-allowed");
    expect((await replay(agent, hooks)).difference).toBeUndefined();
  });

  it("runs a hook's side-effecting tool in the continuity's serial queue, never beside the model's", async () => {
    const running = new Set<string>();
    const overlaps: string[] = [];
    const ids = { hook: "hook", model: "e1" } as const;
    /**
     * Resolves once the other caller's action is durably dispatched: from then on, a side effect
     * not queued behind this one starts at once and is seen running beside it.
     */
    const otherStarted = async (who: keyof typeof ids) => {
      const stop = new AbortController();
      for await (const message of temp.store.subscribe({
        continuity,
        types: ["action.dispatched"],
        signal: stop.signal,
      })) {
        if (message.type !== "event") continue;
        if ((message.event.data as EventData<"action.dispatched">).action_id !== ids[who]) break;
      }
      stop.abort();
    };
    const effect = defineTool({
      name: "effect",
      description: "Changes the world.",
      parameters: z.object({ who: z.enum(["hook", "model"]) }),
      sideEffects: true,
      execute: async ({ who }) => {
        running.add(who);
        await otherStarted(who);
        for (const other of running) if (other !== who) overlaps.push(`${who} beside ${other}`);
        running.delete(who);
        return { done: who };
      },
    });
    const project = parseHookFile(
      `
- id: effect_after_first_step
  event: after_step
  condition: { path: step, op: eq, value: 0 }
  action: { primary: execute, item_type: tool, item_id: effect, params: { who: hook } }
`,
      { path: "/w/.ai/hooks/project.yaml", tier: "project" },
    );
    const hooks = layerHooks([...builtinHooks(), ...project]).hooks;
    const scripted = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        '<response final="false">first</response>',
        '<action type="tool" mode="sync" id="e1">{"name":"effect","parameters":{"who":"model"}}</action><response>done</response>',
      ],
    });
    const runtime = runtimeOver(temp.store, scripted, longRunAgent({ tools: [effect] }), hooks);
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result.status).toBe("completed");
    const events = await readAll(temp.store, continuity);
    const succeeded = data(events, "action.succeeded").map((item) => item.output);
    expect(succeeded).toEqual(expect.arrayContaining([{ done: "hook" }, { done: "model" }]));
    expect(overlaps).toEqual([]);
    // In log order too: the model's side effect starts only once the hook's has ended.
    const seqOf = (type: string, id: string) =>
      events.find((e) => e.type === type && (e.data as { action_id?: string }).action_id === id)
        ?.seq;
    expect(seqOf("action.started", ids.model)).toBeGreaterThan(
      seqOf("action.succeeded", ids.hook) ?? Number.POSITIVE_INFINITY,
    );
  });

  // Every point of a hook action's life where a process can die after the hook fired.
  const killPoints = [
    "action.dispatched",
    "action.started",
    "action.succeeded",
    "hook.completed",
  ] as const;
  for (const point of killPoints) {
    it(`leaves nothing unaccounted for when the process dies at the hook's ${point}`, async () => {
      const hooks = hookRunning("fs.write", { path: "log.txt", content: "ran\n", mode: "append" });
      const counted = countedTools();
      const agent = longRunAgent({ tools: counted.tools });
      const dying = dyingAt(temp.store, point, (item) => {
        const fields = item as { action_id?: string; hook?: string };
        return fields.action_id === "hook" || fields.hook === "after_run";
      });
      const crashed = runtimeOver(dying.store, provider(), agent, hooks);
      await crashed.submit(continuity, { text: "go", actor: "ada", origin: "t" });
      await dying.died;
      // The dead process's tool call, if it made one, finishes its write (a real one would have
      // written it or not): what it did is on disk before anything else looks.
      await Promise.all(counted.calls);
      await temp.store.flush();
      const before = await readAll(temp.store, continuity);
      // The executor is called as `action.started` is handed to the log, not after: a death
      // there may or may not have let the tool run. Before it nothing ran; after it, once.
      const ran = counted.calls.length;
      if (point === "action.dispatched") expect(ran).toBe(0);
      else if (point === "action.started") expect(ran).toBeLessThanOrEqual(1);
      else expect(ran).toBe(1);
      const writes = ran === 1 ? "ran\n" : "";
      expect(await readFile(path.join(workspace, "log.txt"), "utf8").catch(() => "")).toBe(writes);

      const restarted = runtimeOver(temp.store, provider(), agent, hooks);
      await restarted.resume(continuity);
      await restarted.close();
      const after = await readAll(temp.store, continuity);
      // Never run twice: the interrupted action is surfaced, not repeated.
      expect(await readFile(path.join(workspace, "log.txt"), "utf8").catch(() => "")).toBe(writes);
      const worker = data(before, "hook.fired").find((item) => item.hook === "after_run")!.worker!;
      const outcome = hookStream(after, worker).filter(
        (event) => event.type === "hook.completed" || event.type === "hook.failed",
      );
      expect(outcome.map((event) => event.type)).toEqual(["hook.failed"]);
      expect((outcome[0]!.data as EventData<"hook.failed">).error.code).toBe("hook.interrupted");
      const interrupted = data(after, "action.interrupted");
      const cutInAction = point === "action.started" || point === "action.succeeded";
      expect(interrupted).toEqual(
        cutInAction
          ? [expect.objectContaining({ action_id: "hook", dispatched: true, rerun: false })]
          : [],
      );
      expect(data(after, "recovery.started")).toHaveLength(1);

      const report = await replay(agent, hooks);
      expect(report.difference).toBeUndefined();
      expect(report.recoveries).toBe(1);
      expect(counted.calls).toHaveLength(ran);
      expect(await readFile(path.join(workspace, "log.txt"), "utf8").catch(() => "")).toBe(writes);
    });
  }
});
