import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { type HookEntry, layerHooks, parseHookFile } from "../src/hooks/index.js";
import { createScriptedProvider, type ScriptedTurn } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { builtinHooks } from "../src/runtime/builtin-hooks.js";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import {
  filler,
  longRunAgent,
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  SUMMARIZER_MARK,
  scriptedSummarizer,
  summarizerSpec,
} from "./support/continuity-run.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-hooks-run-");

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);

/** The built-in hooks with a project hook file over them. */
function withProjectHooks(yaml: string): HookEntry[] {
  const project = parseHookFile(yaml, { path: "/work/.ai/hooks/project.yaml", tier: "project" });
  return layerHooks([...builtinHooks(), ...project]).hooks;
}

function provider(script: ScriptedTurn[]) {
  return createScriptedProvider({ model: SMALL_MODEL, script, loop: true });
}

describe("hooks in a run", () => {
  it("retries a step that failed with a transient error, with backoff, then goes on", async () => {
    const waits: number[] = [];
    const runtime = longRunRuntime(
      temp.store,
      provider([
        {
          text: "<response>Done.</response>",
          error: { code: "provider.overloaded", message: "busy", afterTokens: 1, times: 2 },
        },
      ]),
      { sleep: async (ms) => void waits.push(ms), random: () => 0 },
    );
    const result = await runtime.submit(continuity, { text: "hi", actor: "ada", origin: "test" });
    await runtime.close();
    expect(result.status).toBe("completed");
    expect(result.result).toBe("Done.");
    const events = await readAll(temp.store, continuity);
    expect(data(events, "loop.decided").map((item) => item.decision)).toEqual([
      "retry",
      "retry",
      "complete",
    ]);
    // The model retry policy's backoff without jitter: 1 s, then 2 s.
    expect(waits).toEqual([1000, 2000]);
    const fired = data(events, "hook.fired").filter((item) => item.event === "error");
    expect(fired.map((item) => item.hook)).toEqual([
      "retry_transient_errors",
      "retry_transient_errors",
    ]);
    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store: target, provider: replayed, intercept }) =>
        longRunRuntime(target, replayed, { intercept }),
    });
    expect(report.difference).toBeUndefined();
  });

  it("fails a run on a permanent error, and stops retrying a transient one after the policy's attempts", async () => {
    const permanent = longRunRuntime(
      temp.store,
      provider([
        {
          text: "<response>x</response>",
          error: { code: "provider.bad-request", message: "no", afterTokens: 1 },
        },
      ]),
    );
    const failed = await permanent.submit(continuity, { text: "hi", actor: "ada", origin: "t" });
    await permanent.close();
    expect(failed.status).toBe("failed");
    const events = await readAll(temp.store, continuity);
    expect(data(events, "hook.fired").map((item) => item.hook)).toContain("fail_permanent_errors");
    expect(data(events, "loop.decided").map((item) => item.decision)).toEqual(["fail"]);

    const busy = longRunRuntime(
      temp.store,
      provider([
        {
          text: "<response>x</response>",
          error: { code: "provider.overloaded", message: "busy", afterTokens: 1 },
        },
      ]),
    );
    const gaveUp = await busy.submit("other", { text: "hi", actor: "ada", origin: "t" });
    await busy.close();
    expect(gaveUp.status).toBe("failed");
    const decisions = data(await readAll(temp.store, "other"), "loop.decided").map(
      (item) => item.decision,
    );
    // MODEL_RETRY.maxAttempts (4) steps: three retries, then the failure.
    expect(decisions).toEqual(["retry", "retry", "retry", "fail"]);
  });

  it("escalates a limit reached", async () => {
    const runtime = longRunRuntime(
      temp.store,
      provider(['<response final="false">more</response>']),
      {
        agent: longRunAgent({ limits: { maxTurns: 2 } }),
      },
    );
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result.status).toBe("limit");
    const completed = data(await readAll(temp.store, continuity), "hook.completed");
    const escalated = completed.find((item) => item.hook === "escalate_limits");
    expect(escalated?.outcome).toBe("escalated");
    expect(escalated?.detail).toContain("max_turns reached (2 of 2)");
  });

  it("runs a project hook's tool with the event in its params, beside the run", async () => {
    const seen: string[] = [];
    const note = defineTool({
      name: "note",
      description: "Notes a step.",
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        seen.push(text);
        return { noted: text };
      },
    });
    const hooks = withProjectHooks(`
- id: note_steps
  event: after_step
  condition: { path: decision, op: eq, value: complete }
  action:
    primary: execute
    item_type: tool
    item_id: note
    params: { text: "step \${event.step} of \${event.thread || 'none'}" }
`);
    const runtime = longRunRuntime(temp.store, provider(["<response>ok</response>"]), {
      agent: longRunAgent({ tools: [note] }),
      hooks,
    });
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await runtime.close();
    expect(seen).toEqual([`step 0 of ${result.thread}`]);
    const events = await readAll(temp.store, continuity);
    const done = events.find(
      (event) =>
        event.type === "hook.completed" &&
        (event.data as EventData<"hook.completed">).hook === "note_steps",
    );
    expect(done?.stream.kind).toBe("worker");
    expect((done!.data as EventData<"hook.completed">).detail).toContain("noted");
  });

  it("runs a project hook's directive as a background child thread and logs what it answered", async () => {
    const notify = {
      ...summarizerSpec("notify"),
      instructions: `${SUMMARIZER_MARK}: no. You note that a run ended with status $status.`,
    };
    const runtime = longRunRuntime(
      temp.store,
      routedProvider(
        provider(["<response>ok</response>"]),
        scriptedSummarizer(["<response>noted</response>"]),
      ),
      {
        hooks: withProjectHooks(`
- id: notify_on_complete
  event: after_complete
  action:
    primary: execute
    item_type: directive
    item_id: notify
    params: { status: "\${event.status}" }
`),
        agents: {
          get: (name) => (name === "notify" ? notify : undefined),
          names: () => ["notify"],
        },
      },
    );
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result.status).toBe("completed");
    const events = await readAll(temp.store, continuity);
    const child = events.find(
      (event) =>
        event.type === "thread.started" &&
        (event.data as EventData<"thread.started">).directive === "notify",
    );
    expect((child!.data as EventData<"thread.started">).parent?.thread).toBe(result.thread);
    const done = data(events, "hook.completed").find((item) => item.hook === "notify_on_complete");
    expect(done).toMatchObject({ outcome: "completed", detail: "noted" });
  });

  it("lets a project hook move the pre-compute threshold, and switch it off", async () => {
    const run = async (yaml: string, name: string, turns: number) => {
      const runtime = longRunRuntime(
        temp.store,
        routedProvider(provider(["<response>Noted.</response>"]), scriptedSummarizer()),
        { hooks: withProjectHooks(yaml) },
      );
      for (let turn = 1; turn <= turns; turn++) {
        await runtime.submit(name, { text: filler(turn, 120), actor: "ada", origin: "t" });
      }
      await runtime.close();
      return readAll(temp.store, name);
    };
    const early = await run(
      `
- id: default_compaction
  event: context_window_pressure
  condition: { path: pressure_ratio, op: gte, value: 0.3 }
  action:
    primary: execute
    item_type: directive
    item_id: "\${event.summarizer}"
    params: { mode: precompute, pressure_ratio: "\${event.pressure_ratio}" }
`,
      "early",
      12,
    );
    const fired = data(early, "hook.fired").filter((item) => item.hook === "default_compaction");
    expect(fired).toHaveLength(1);
    expect(fired[0]!.layer).toBe(1);
    const ratio = fired[0]!.params.pressure_ratio as number;
    expect(ratio).toBeGreaterThanOrEqual(0.3);
    expect(ratio).toBeLessThan(0.8);
    expect(data(early, "summary.started")[0]!.mode).toBe("precompute");

    // Switched off, nothing is pre-computed: the handoff makes its summary when it comes.
    const off = await run("- { id: default_compaction, enabled: false }\n", "off", 36);
    expect(data(off, "hook.fired").filter((item) => item.hook === "default_compaction")).toEqual(
      [],
    );
    expect(data(off, "thread.continued").length).toBeGreaterThanOrEqual(1);
    expect(data(off, "summary.started").map((item) => item.mode)).not.toContain("precompute");
  });
});
