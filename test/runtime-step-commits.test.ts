import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { withAppends } from "./support/store-taps.js";
import { tempStore } from "./support/transcripts.js";

let inner: EventStore;
let cleanup: () => Promise<void>;
/** The critical event types of each append call, in the order they were made. */
let commits: string[][];
let store: EventStore;

beforeEach(async () => {
  ({ store: inner, cleanup } = await tempStore("spool-step-commits-"));
  commits = [];
  const note = (types: string[]) => {
    if (types.length > 0) commits.push(types);
  };
  store = withAppends(inner, {
    append: (event) => {
      if (event.type !== "token.delta") note([event.type]);
      return inner.append(event);
    },
    appendBatch: (events) => {
      note(events.filter((event) => event.type !== "token.delta").map((event) => event.type));
      return inner.appendBatch(events);
    },
  });
});
afterEach(async () => {
  await cleanup();
});

/** A tool that waits until the test lets it go, so a test can look at the log meanwhile. */
function gatedTool() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered!: () => void;
  const running = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const tool = defineTool({
    name: "wait",
    description: "Waits for the test.",
    parameters: z.object({}),
    execute: async () => {
      entered();
      await gate;
      return { ok: true };
    },
  });
  return { tool, release, running };
}

function runtimeWith(script: string[], tools = [] as ReturnType<typeof gatedTool>["tool"][]) {
  return createAgentRuntime({
    store,
    provider: createScriptedProvider({ model: "claude-sonnet-4-5", script }),
    agent: {
      directive: "tester",
      instructions: "Test things.",
      model: "claude-sonnet-4-5",
      limits: {},
      permits: () => true,
      tools,
    },
  });
}

const commitOf = (type: string) => commits.find((types) => types.includes(type));

describe("a step's commits", () => {
  it("commit a message that can start no work together with its step's end", async () => {
    const runtime = runtimeWith(["<response>plain answer</response>"]);
    const result = await runtime.submit("home", { text: "hi", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    const last = commitOf("message.completed");
    expect(last).toEqual(expect.arrayContaining(["message.completed", "step.completed"]));
    expect(last!.indexOf("message.completed")).toBeLessThan(last!.indexOf("step.completed"));
  });

  it("make a message with an action durable before its action ends", async () => {
    const { tool, release, running } = gatedTool();
    const runtime = runtimeWith(
      [
        `<action type="tool" mode="sync" id="a1">{"name":"wait","parameters":{}}</action>`,
        "<response>done</response>",
      ],
      [tool],
    );
    const done = runtime.submit("home", { text: "go", actor: "ada", origin: "test" });
    await running;
    // The action is still running (its gate is shut): its message must reach the log meanwhile,
    // on a commit of its own. Held back to the step's end, it would never arrive, and the test
    // would time out.
    for await (const message of inner.subscribe({ continuity: "home" })) {
      if (message.type === "event" && message.event.type === "message.completed") break;
    }
    const first = commitOf("message.completed");
    expect(first).toEqual(["message.completed"]);
    release();
    expect((await done).status).toBe("completed");
  });

  it("write at once a message that only mentions an action tag in prose", async () => {
    const runtime = runtimeWith(["<response>write <ACTION> tags to act</response>"]);
    const result = await runtime.submit("home", { text: "hi", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
    expect(commitOf("message.completed")).toEqual(["message.completed"]);
  });
});
