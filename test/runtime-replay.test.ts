import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyTool, defineTool } from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type ScriptedTurn } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { type AgentSpec, createAgentRuntime } from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "home";
let store: EventStore;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-replay-"));
});
afterEach(async () => {
  await cleanup();
});

let counter = 0;
const counterTool = defineTool({
  name: "counter.next",
  description: "Returns the next number (a different one every run: replay must not call it).",
  parameters: z.object({ label: z.string() }),
  execute: ({ label }) => ({ label, n: ++counter }),
});
const failing = defineTool({
  name: "flaky",
  description: "Fails.",
  parameters: z.object({}),
  execute: () => {
    throw new Error("the disk is full");
  },
});

function agent(tools: AnyTool[] = [counterTool, failing]): AgentSpec {
  return {
    directive: "tester",
    instructions: "Test things.",
    model: "claude-sonnet-4-5",
    limits: { maxTurns: 6 },
    permits: (_type, name) => name !== "forbidden",
    tools,
  };
}

const SCRIPT: ScriptedTurn[] = [
  `<thought>go</thought><action type="tool" mode="async" id="a1">{"name":"counter.next","parameters":{"label":"x"},"output_key":"x"}</action><action type="tool" mode="async" id="a2">{"name":"flaky","parameters":{},"retry":1}</action><action type="tool" mode="sync" id="a3">{"name":"counter.next","parameters":{"label":"n=$x.n"},"depends_on":["a1"]}</action><response final="false">first: $x.n</response>`,
  `<action type="tool" mode="sync" id="b1">{"name":"forbidden","parameters":{}}</action><response>done</response>`,
  "<response>second turn</response>",
];

async function record(script: ScriptedTurn[] = SCRIPT): Promise<void> {
  const runtime = createAgentRuntime({
    store,
    provider: createScriptedProvider({ model: "claude-sonnet-4-5", script }),
    agent: agent(),
  });
  await runtime.submit(continuity, { text: "start", actor: "ada", origin: "test" });
  await runtime.submit(continuity, { text: "again", actor: "ada", origin: "test" });
}

const replay = (source: EventStore, stallMs = 2000) =>
  replayContinuity({
    source,
    continuity,
    stallMs,
    makeRuntime: ({ store: target, world }) =>
      createAgentRuntime({ store: target, provider: world.provider, agent: agent(), world }),
  });

/** Copies the continuity into a fresh store, changing one event on the way. */
async function edited(
  events: SpoolEvent[],
  change: (event: SpoolEvent) => SpoolEvent | undefined,
): Promise<{ store: EventStore; cleanup(): Promise<void>; changed: SpoolEvent }> {
  const copy = await tempStore("spool-replay-edited-");
  let changed: SpoolEvent | undefined;
  for (const event of events) {
    const next = changed ? undefined : change(event);
    if (next) changed = next;
    const { seq: _seq, hash: _hash, criticality: _criticality, ...rest } = next ?? event;
    await copy.store.append(rest);
  }
  return { ...copy, changed: changed! };
}

describe("replay", () => {
  it("re-derives a continuity with actions, retries, refusals and two turns as identical, calling nothing", async () => {
    await record();
    const before = counter;
    const report = await replay(store);
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, recoveries: 0 });
    expect(report.compared).toBeGreaterThan(30);
    expect(counter).toBe(before);
  });

  it("names the first decision that differs in an edited log", async () => {
    await record();
    const events = await readAll(store, continuity);
    const copy = await edited(events, (event) =>
      event.type === "action.dispatched" && (event.data as { action_id: string }).action_id === "a3"
        ? { ...event, data: { ...(event.data as object), parameters: { label: "999" } } }
        : undefined,
    );
    try {
      const report = await replay(copy.store);
      expect(report.identical).toBe(false);
      expect(report.difference?.expected?.id).toBe(copy.changed.id);
      expect(report.difference?.actual).toMatchObject({ type: "action.dispatched" });
    } finally {
      await copy.cleanup();
    }
  });

  it("catches an edited loop decision", async () => {
    await record();
    const events = await readAll(store, continuity);
    const copy = await edited(events, (event) =>
      event.type === "loop.decided"
        ? { ...event, data: { ...(event.data as object), reason: "the model asked nicely" } }
        : undefined,
    );
    try {
      const report = await replay(copy.store);
      expect(report.identical).toBe(false);
      expect(report.difference?.expected?.id).toBe(copy.changed.id);
    } finally {
      await copy.cleanup();
    }
  });

  it("catches an edited tool result where the next context no longer matches", async () => {
    await record();
    const events = await readAll(store, continuity);
    const copy = await edited(events, (event) =>
      event.type === "action.succeeded" && (event.data as { action_id: string }).action_id === "a3"
        ? { ...event, data: { ...(event.data as object), output: { label: "n=1", n: 42 } } }
        : undefined,
    );
    try {
      const report = await replay(copy.store);
      expect(report.identical).toBe(false);
      // The result itself is an input to replay; the context compiled from it is what differs.
      expect(report.difference?.expected?.type).toBe("context.compiled");
      expect(report.difference!.expected!.seq).toBeGreaterThan(copy.changed.seq);
    } finally {
      await copy.cleanup();
    }
  });
});
