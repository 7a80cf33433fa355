import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SchedulerClock } from "../src/actions/index.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { SpoolError, type SpoolEvent } from "../src/spec/index.js";
import {
  createWorkflowExecutor,
  parseWorkflow,
  type WorkflowInnerCall,
} from "../src/workflows/index.js";
import { collect } from "./support/events.js";

const continuity = "home";
let dir: string;
let store: EventStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-workflows-run-"));
  store = await openEventStore({ db: dir, durability: "fast" });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A clock whose timers fire when the test says (or at once, with `auto`); it records delays. */
function testClock(auto: boolean) {
  let now = 0;
  const timers: Array<{ ms: number; callback: () => void; live: boolean }> = [];
  const clock: SchedulerClock = {
    now: () => now,
    setTimer(ms, callback) {
      const timer = { ms, callback, live: true };
      timers.push(timer);
      if (auto) {
        queueMicrotask(() => {
          if (!timer.live) return;
          timer.live = false;
          now += ms;
          callback();
        });
      }
      return () => {
        timer.live = false;
      };
    },
  };
  const fireAll = () => {
    for (const timer of timers.filter((entry) => entry.live)) {
      timer.live = false;
      now += timer.ms;
      timer.callback();
    }
  };
  return { clock, delays: () => timers.map((timer) => timer.ms), fireAll };
}

/** A promise with its resolver: a latch a test opens. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

function setup(
  yaml: string,
  run: (call: WorkflowInnerCall) => Promise<unknown>,
  options: { auto?: boolean; step?: string; timeouts?: "engine" | "run" } = {},
) {
  const definition = parseWorkflow(yaml, { source: "test.yaml" });
  const time = testClock(options.auto ?? true);
  const executor = createWorkflowExecutor({
    store,
    continuity,
    loadWorkflow: () => definition,
    names: () => [definition.name],
    run,
    step: options.step ?? "s1",
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    clock: time.clock,
    random: () => 0,
    backoff: { baseMs: 100, factor: 2, maxMs: 1000 },
  });
  const controller = new AbortController();
  const execute = (parameters: Record<string, unknown> = {}) =>
    executor.execute({
      actionId: "w1",
      type: "workflow",
      name: definition.name,
      parameters,
      attempt: 1,
      signal: controller.signal,
      progress: () => undefined,
    });
  return { execute, controller, time, executor };
}

const events = (graph = "s1:w1") =>
  collect(store.read({ continuity, stream: { kind: "task", id: graph } }));
const brief = (event: SpoolEvent) => {
  const data = event.data as { node?: string; status?: string };
  return [event.type, data.node, data.status].filter(Boolean).join(" ");
};

describe("workflow runs", () => {
  it("runs a diamond in dependency order, with independent steps overlapping", {
    timeout: 10_000,
  }, async () => {
    const log: string[] = [];
    const started = { left: latch(), right: latch() };
    const { execute } = setup(
      [
        "name: diamond",
        "inputs: { n: { type: integer } }",
        "steps:",
        "  - { id: top, action: { type: tool, name: top, parameters: { n: $inputs.n } } }",
        "  - { id: left, depends: [top], action: { type: tool, name: left, parameters: { x: $steps.top } } }",
        "  - { id: right, depends: [top], action: { type: tool, name: right, parameters: { x: $steps.top } } }",
        "  - id: bottom",
        "    depends: [left, right]",
        "    action: { type: tool, name: bottom, parameters: { sum: [$steps.left, $steps.right], text: 'l=$steps.left' } }",
        "output: { result: $steps.bottom, n: $inputs.n }",
      ].join("\n"),
      async (call) => {
        log.push(`start ${call.node}`);
        const x = call.parameters.x as number;
        let output: unknown;
        if (call.node === "top") output = (call.parameters.n as number) * 10;
        else if (call.node === "left") {
          started.left.open();
          // Finishes only once right has started: the two must be running at the same time.
          await started.right.opened;
          output = x + 1;
        } else if (call.node === "right") {
          started.right.open();
          await started.left.opened;
          output = x + 2;
        } else output = call.parameters;
        log.push(`end ${call.node}`);
        return output;
      },
    );
    expect(await execute({ n: 4 })).toEqual({ result: { sum: [41, 42], text: "l=41" }, n: 4 });
    expect(log.slice(0, 2)).toEqual(["start top", "end top"]);
    expect(log.slice(2, 4).sort()).toEqual(["start left", "start right"]);
    expect(log.slice(-2)).toEqual(["start bottom", "end bottom"]);
    const all = await events();
    expect(all[0]!.data).toEqual({
      graph: "s1:w1",
      name: "diamond",
      nodes: [
        { node: "top", name: "tool:top" },
        { node: "left", name: "tool:left", depends_on: ["top"] },
        { node: "right", name: "tool:right", depends_on: ["top"] },
        { node: "bottom", name: "tool:bottom", depends_on: ["left", "right"] },
      ],
    });
    const types = all.map(brief);
    expect(types.slice(0, 3)).toEqual([
      "graph.started",
      "step.started top",
      "step.completed top succeeded",
    ]);
    expect(types.slice(3, 5).sort()).toEqual(["step.started left", "step.started right"]);
    expect(types.slice(-3)).toEqual([
      "step.started bottom",
      "step.completed bottom succeeded",
      "graph.completed",
    ]);
  });

  it("emits its events in order, foreach included, on the action's task stream", async () => {
    const { execute } = setup(
      [
        "name: chain",
        "inputs: { items: { type: array }, prefix: { default: 'p' } }",
        "steps:",
        "  - { id: each, foreach: $inputs.items, as: word, action: { type: tool, name: up, parameters: { w: '$inputs.prefix-$word', i: $index } } }",
        "  - { id: join, depends: [each], action: { type: tool, name: join, parameters: { parts: $steps.each } } }",
        "output: $steps.join",
      ].join("\n"),
      async (call) =>
        call.node === "each"
          ? `${String(call.parameters.w)}#${String(call.parameters.i)}`
          : (call.parameters.parts as string[]).join(","),
    );
    expect(await execute({ items: ["a", "b"] })).toBe("p-a#0,p-b#1");
    const all = await events();
    expect(all.map((event) => event.type)).toEqual([
      "graph.started",
      "step.started",
      "foreach.completed",
      "step.completed",
      "step.started",
      "step.completed",
      "graph.completed",
    ]);
    expect(all.every((event) => event.stream.kind === "task" && event.stream.id === "s1:w1")).toBe(
      true,
    );
    expect(all[1]!.data).toEqual({ kind: "graph", graph: "s1:w1", node: "each", name: "tool:up" });
    expect(all[2]!.data).toMatchObject({ node: "each", items: 2, succeeded: 2, failed: 0 });
    expect(all.at(-1)!.data).toMatchObject({ graph: "s1:w1", result: "p-a#0,p-b#1" });
  });

  it("runs foreach items under the concurrency cap; a partial failure fails the step and skips its dependents", async () => {
    let inFlight = 0;
    let most = 0;
    const calls: string[] = [];
    const { execute } = setup(
      [
        "name: fan",
        "steps:",
        "  - { id: each, foreach: [1, 2, 3, 4], concurrency: 2, action: { type: tool, name: t, parameters: { n: $item } } }",
        "  - { id: after, depends: [each], action: { type: tool, name: t } }",
        "  - { id: more, depends: [after], action: { type: tool, name: t } }",
        "  - { id: alone, action: { type: tool, name: t } }",
      ].join("\n"),
      async (call) => {
        calls.push(call.node);
        if (call.node !== "each") return "ok";
        inFlight += 1;
        most = Math.max(most, inFlight);
        await Promise.resolve();
        inFlight -= 1;
        if (call.parameters.n === 3) throw new SpoolError("tool.broken", "three is broken");
        return call.parameters.n;
      },
    );
    await expect(execute()).rejects.toMatchObject({
      code: "workflow.step-failed",
      retryable: false,
      message: expect.stringContaining(
        'step "each" failed: 1 of 4 items failed; item 2: three is broken (tool.broken)',
      ),
    });
    expect(most).toBe(2);
    expect(calls.filter((node) => node === "each")).toHaveLength(4);
    expect(calls).toContain("alone");
    expect(calls).not.toContain("after");
    const all = await events();
    expect(all.find((event) => event.type === "foreach.completed")!.data).toMatchObject({
      items: 4,
      succeeded: 3,
      failed: 1,
    });
    const completed = all.filter((event) => event.type === "step.completed").map(brief);
    expect(completed).toEqual(
      expect.arrayContaining([
        "step.completed each failed",
        "step.completed after skipped",
        "step.completed more skipped",
        "step.completed alone succeeded",
      ]),
    );
    expect(all.at(-1)!.type).toBe("graph.error");
    expect(all.at(-1)!.data).toMatchObject({
      node: "each",
      error: { code: "workflow.foreach-failed" },
    });
  });

  it("records the same events whatever order independent steps finish in", async () => {
    const yaml = [
      "name: race",
      "inputs: { items: { type: array } }",
      "steps:",
      "  - { id: one, action: { type: tool, name: t } }",
      "  - { id: two, action: { type: tool, name: t } }",
      "  - { id: each, foreach: $inputs.items, concurrency: 3, action: { type: tool, name: t, parameters: { n: $item } } }",
      "  - { id: after, depends: [two, one], action: { type: tool, name: t } }",
      "output: $steps.after",
    ].join("\n");
    /** Runs the workflow as step `step`, every inner action failing, finishing in `order`. */
    const runInOrder = async (step: string, order: string[]) => {
      const waiting = new Map<string, () => void>();
      const calls: string[] = [];
      const { execute } = setup(
        yaml,
        async (call) => {
          calls.push(`${call.step} ${call.actionId}`);
          await new Promise<void>((resolve) => waiting.set(call.actionId, resolve));
          throw new SpoolError("tool.broken", `${call.actionId} broke`);
        },
        { step },
      );
      const outcome = execute({ items: [1, 2, 3] }).catch((error: SpoolError) => error);
      for (const id of order) {
        while (!waiting.has(id)) await new Promise((resolve) => setImmediate(resolve));
        waiting.get(id)!();
        // The engine takes this failure in before the next one comes.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const error = await outcome;
      const all = await events(`${step}:w1`);
      return { error, all, calls };
    };
    const ids = ["steps.one", "steps.two", "steps.each.0", "steps.each.1", "steps.each.2"];
    const forward = await runInOrder("s1", ids);
    const backward = await runInOrder("s2", [...ids].reverse());
    expect(forward.calls.sort()).toEqual(ids.map((id) => `s1:w1 ${id}`).sort());
    // Event by event, step by step; only the order of different steps' events may differ.
    const comparable = (list: SpoolEvent[]) =>
      list
        .map((event) =>
          JSON.stringify({
            type: event.type,
            data: { ...(event.data as object), graph: "", duration_ms: 0 },
          }),
        )
        .sort();
    expect(comparable(backward.all)).toEqual(comparable(forward.all));
    expect(forward.error).toMatchObject({
      message: expect.stringContaining('step "one" failed'),
    });
    expect(backward.error).toMatchObject({ message: (forward.error as SpoolError).message });
    const after = forward.all.find(
      (event) => (event.data as { node?: string }).node === "after",
    )!.data;
    // Its first dependency in its own `depends` order, whichever failed first.
    expect(after).toMatchObject({ status: "skipped", error: { message: 'step "two" failed' } });
    const foreach = forward.all.find((event) => event.type === "foreach.completed")!;
    expect(foreach.data).toMatchObject({ failed: 3 });
    const each = forward.all.find(
      (event) =>
        event.type === "step.completed" && (event.data as { node?: string }).node === "each",
    )!.data;
    expect(each).toMatchObject({ error: { message: expect.stringContaining("item 0:") } });
  });

  it("retries a failing step with backoff on the injected clock, then succeeds", async () => {
    const attempts: number[] = [];
    const { execute, time } = setup(
      "name: flaky\nsteps:\n  - { id: a, retry: 3, action: { type: tool, name: t } }\noutput: $steps.a",
      async (call) => {
        attempts.push(call.attempt);
        if (call.attempt < 3) throw new Error(`attempt ${call.attempt} failed`);
        return "third time";
      },
    );
    expect(await execute()).toBe("third time");
    expect(attempts).toEqual([1, 2, 3]);
    expect(time.delays()).toEqual([100, 200]);
  });

  it("does not retry an error that says it is not retryable", async () => {
    const attempts: number[] = [];
    const { execute } = setup(
      "name: hopeless\nsteps:\n  - { id: a, retry: 3, action: { type: tool, name: t } }",
      async (call) => {
        attempts.push(call.attempt);
        throw new SpoolError("tool.bad", "never works", { retryable: false });
      },
    );
    await expect(execute()).rejects.toMatchObject({ code: "workflow.step-failed" });
    expect(attempts).toEqual([1]);
  });

  it("with on_error: skip, records the failure and runs the dependents with null", async () => {
    const seen: unknown[] = [];
    const { execute } = setup(
      [
        "name: tolerant",
        "steps:",
        "  - { id: a, on_error: skip, action: { type: tool, name: t } }",
        "  - { id: b, depends: [a], action: { type: tool, name: t, parameters: { from: $steps.a } } }",
        "output: $steps.b",
      ].join("\n"),
      async (call) => {
        if (call.node === "a") throw new SpoolError("tool.down", "service down");
        seen.push(call.parameters.from);
        return "fallback";
      },
    );
    expect(await execute()).toBe("fallback");
    expect(seen).toEqual([null]);
    const all = await events();
    expect(all.map(brief)).toEqual([
      "graph.started",
      "step.started a",
      "step.completed a failed",
      "step.started b",
      "step.completed b succeeded",
      "graph.completed",
    ]);
    expect(all[2]!.data).toMatchObject({ error: { code: "tool.down", message: "service down" } });
  });

  it("fails an attempt that runs past timeout_ms, aborting its signal", async () => {
    let signal: AbortSignal | undefined;
    const reached = latch();
    const { execute, time } = setup(
      "name: slow\nsteps:\n  - { id: a, timeout_ms: 50, action: { type: tool, name: t } }",
      (call) => {
        signal = call.signal;
        reached.open();
        return new Promise(() => undefined);
      },
      { auto: false },
    );
    const outcome = execute().catch((error: SpoolError) => error);
    await reached.opened;
    time.fireAll();
    expect(await outcome).toMatchObject({
      code: "workflow.step-failed",
      message: expect.stringContaining("ran past its timeout of 50 ms"),
    });
    expect(signal?.aborted).toBe(true);
  });

  it("with timeouts: run, hands timeout_ms to run and sets no timer of its own", async () => {
    const limits: unknown[] = [];
    const { execute, time } = setup(
      "name: timed\nsteps:\n  - { id: a, timeout_ms: 50, action: { type: tool, name: t } }\n  - { id: b, action: { type: tool, name: t } }",
      async (call) => {
        limits.push([call.node, call.timeoutMs]);
        return "done";
      },
      { timeouts: "run" },
    );
    await execute();
    expect(limits.sort()).toEqual([
      ["a", 50],
      ["b", undefined],
    ]);
    expect(time.delays()).toEqual([]);
  });

  it("cancels mid-run: aborts the running step, starts nothing more, and records graph.cancelled", async () => {
    const reached = latch();
    let inner: AbortSignal | undefined;
    const started: string[] = [];
    const { execute, controller } = setup(
      [
        "name: long",
        "steps:",
        "  - { id: a, action: { type: tool, name: t } }",
        "  - { id: b, depends: [a], action: { type: tool, name: t } }",
      ].join("\n"),
      (call) => {
        started.push(call.node);
        inner = call.signal;
        reached.open();
        return new Promise((_resolve, reject) => {
          call.signal.addEventListener("abort", () => reject(new Error("aborted")));
        });
      },
    );
    const outcome = execute().catch((error: SpoolError) => error);
    await reached.opened;
    controller.abort(new Error("the user stopped it"));
    expect(await outcome).toMatchObject({ code: "workflow.cancelled" });
    expect(inner?.aborted).toBe(true);
    expect(started).toEqual(["a"]);
    const all = await events();
    expect(all.map(brief)).toEqual(["graph.started", "step.started a", "graph.cancelled"]);
    expect(all.at(-1)!.data).toEqual({ graph: "s1:w1", reason: "the user stopped it" });
  });

  it("refuses bad inputs before anything is recorded", async () => {
    const { execute, executor } = setup(
      "name: typed\ninputs: { n: { type: integer }, tag: { type: string, required: false } }\nsteps:\n  - { id: a, action: { type: tool, name: t } }",
      async () => "never",
    );
    await expect(execute({ n: "four", extra: 1 })).rejects.toMatchObject({
      code: "workflow.bad-inputs",
      message: expect.stringMatching(
        /n: must be an integer, got "four"; extra: is not an input.*n \(integer\), tag \(string, optional\)/,
      ),
    });
    expect(await events()).toEqual([]);
    expect(executor.canRun?.("typed")).toBe(true);
    expect(executor.canRun?.("other")).toBe(false);
  });
});
