import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createMemoryActionLog,
  createToolExecutor,
  createToolRegistry,
  createVariableStore,
  defineTool,
  runStep,
  type StepOutputEvent,
} from "../src/actions/index.js";
import {
  act,
  chunked,
  consume,
  drain,
  handExecutor,
  lifecycle,
  manualOutput,
} from "./support/actions-helpers.js";

const lookup = defineTool({
  name: "lookup",
  description: "Looks a city up.",
  parameters: z.strictObject({ city: z.string() }),
  execute: async ({ city }) => ({ city, population: city.length * 1000, tags: ["old", "big"] }),
});
const shout = defineTool({
  name: "shout",
  description: "Upper-cases text.",
  parameters: z.strictObject({ text: z.string() }),
  execute: async ({ text }) => text.toUpperCase(),
});

const script = [
  "<thought>I will look Oslo up. ",
  act("find", "async", { name: "lookup", parameters: { city: "Oslo" }, output_key: "oslo" }),
  " Meanwhile I think.</thought>",
  act("loud", "sync", {
    name: "shout",
    parameters: { text: "pop $oslo.population" },
    depends_on: ["find"],
    output_key: "loud",
  }),
  '<response final="false">Oslo has $oslo.population people ($oslo.tags[1]); $loud; $5 stays.</response>',
  "<response>Done: $missing</response>",
].join("");

describe("runStep end to end, with the real parser", () => {
  for (const size of [1, 7, 64, script.length]) {
    it(`runs a scripted output split into ${size}-character chunks`, async () => {
      const log = createMemoryActionLog();
      const run = runStep({
        output: chunked(script, size),
        log,
        variables: createVariableStore(),
        executors: [createToolExecutor(createToolRegistry([lookup, shout]))],
      });
      const out = consume(run);
      await out.done;
      expect(out.text("response")).toBe(
        "Oslo has 4000 people (big); POP 4000; $5 stays.Done: $missing",
      );
      expect(out.text("thought")).toBe("I will look Oslo up.  Meanwhile I think.");
      const end = out.events.at(-1)!;
      expect(end.type).toBe("step-end");
      if (end.type !== "step-end") return;
      expect(end.summary.final).toBe(true);
      expect(end.summary.errors).toEqual([]);
      expect(end.summary.actions.map((a) => [a.id, a.status, a.output])).toEqual([
        ["find", "succeeded", { city: "Oslo", population: 4000, tags: ["old", "big"] }],
        ["loud", "succeeded", "POP 4000"],
      ]);
      expect(lifecycle(log)).toEqual([
        "dispatched find",
        "started find",
        "succeeded find",
        "dispatched loud",
        "started loud",
        "succeeded loud",
      ]);
      const inThought = log.ofType("action.dispatched").map((e) => e.data.in_thought);
      expect(inThought).toEqual([true, false]);
    });
  }

  it("records every parser error as protocol.error and yields it as a step error", async () => {
    const log = createMemoryActionLog();
    const run = runStep({
      output: chunked(
        '<action type="tool" mode="sometimes" id="x">{}</action><response>ok</response>',
        5,
      ),
      log,
      variables: createVariableStore(),
      executors: [handExecutor().executor],
    });
    const out = consume(run);
    await out.done;
    const recorded = log.ofType("protocol.error");
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.map((e) => e.data.code)).toContain("protocol.unknown-mode");
    const stepErrors = out.events.filter((e) => e.type === "step-error");
    expect(stepErrors).toHaveLength(recorded.length);
    const end = out.events.at(-1) as Extract<StepOutputEvent, { type: "step-end" }>;
    expect(end.summary.errors.map((e) => e.code)).toEqual(recorded.map((e) => e.data.code));
  });

  it("holds a response's $reference, and the text after it, until its action ends", async () => {
    const tools = handExecutor();
    const output = manualOutput();
    const run = runStep({
      output,
      log: createMemoryActionLog(),
      variables: createVariableStore(),
      executors: [tools.executor],
    });
    const out = consume(run);
    output.push(act("w", "async", { name: "weather", parameters: {}, output_key: "weather" }));
    output.push("<response>Sky: $weather.sky, and more text");
    await tools.arrival("w");
    await drain();
    expect(out.text("response")).toBe("Sky: ");
    output.push(" still coming</response>");
    output.close();
    await drain();
    expect(out.text("response")).toBe("Sky: ");
    expect(out.kinds()).not.toContain("block-end");
    tools.last("w").resolve({ sky: "clear" });
    await out.done;
    expect(out.text("response")).toBe("Sky: clear, and more text still coming");
    // Notifications that happen while text is held queue up behind it: output order is kept.
    expect(out.kinds().slice(-4)).toEqual([
      "block-end",
      "action.succeeded",
      "variable.set",
      "step-end",
    ]);
  });

  it("reports forward references that never appeared as step errors at the end", async () => {
    const tools = handExecutor();
    const log = createMemoryActionLog();
    const run = runStep({
      output: chunked(act("a", "async", { name: "t", parameters: {}, depends_on: ["ghost"] }), 9),
      log,
      variables: createVariableStore(),
      executors: [tools.executor],
    });
    const out = consume(run);
    await out.done;
    const end = out.events.at(-1) as Extract<StepOutputEvent, { type: "step-end" }>;
    expect(end.summary.errors.map((e) => e.code)).toEqual(["action.dependency-missing"]);
    expect(end.summary.actions[0]!.reason).toBe("dependency-missing");
    expect(tools.calls).toEqual([]);
  });

  it("stopping early cancels the step's actions", async () => {
    const tools = handExecutor();
    const log = createMemoryActionLog();
    const output = manualOutput();
    const run = runStep({
      output,
      log,
      variables: createVariableStore(),
      executors: [tools.executor],
    });
    output.push(act("long", "async", { name: "t", parameters: {} }));
    const iterator = run[Symbol.asyncIterator]();
    await iterator.next();
    const { call } = await tools.arrival("long");
    await iterator.return?.();
    expect(call.signal.aborted).toBe(true);
    expect(lifecycle(log).at(-1)).toBe("cancelled long");
  });

  it("a failing output stream ends in step-failed, never a throw, and cancels its actions", async () => {
    const tools = handExecutor();
    const log = createMemoryActionLog();
    const output = manualOutput();
    const run = runStep({
      output,
      log,
      variables: createVariableStore(),
      executors: [tools.executor],
    });
    const out = consume(run);
    output.push(act("a", "async", { name: "t", parameters: {} }));
    await tools.arrival("a");
    output.fail(new Error("connection reset"));
    await out.done;
    const last = out.events.at(-1)!;
    expect(last.type).toBe("step-failed");
    if (last.type !== "step-failed") return;
    expect(last.error).toEqual({ code: "step.output-failed", message: "connection reset" });
    expect(last.summary.actions.map((a) => a.status)).toEqual(["cancelled"]);
  });

  it("an abort signal cancels the step, which ends with a cancelled summary", async () => {
    const tools = handExecutor();
    const output = manualOutput();
    const controller = new AbortController();
    const run = runStep({
      output,
      log: createMemoryActionLog(),
      variables: createVariableStore(),
      executors: [tools.executor],
      signal: controller.signal,
    });
    const out = consume(run);
    output.push(act("s", "sync", { name: "t", parameters: {} }));
    await tools.arrival("s");
    controller.abort("user pressed stop");
    await out.done;
    const end = out.events.at(-1) as Extract<StepOutputEvent, { type: "step-end" }>;
    expect(end.type).toBe("step-end");
    expect(end.summary.cancelled).toBe(true);
    expect(end.summary.actions[0]).toMatchObject({
      status: "cancelled",
      message: "user pressed stop",
    });
  });
});
