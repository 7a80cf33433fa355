import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import type { NewEvent } from "../src/spec/index.js";
import { createKnowledgeSink, renderKnowledge } from "../src/transcript/index.js";
import { dispatched, onStep, readAll, startThread, tempStore } from "./support/transcripts.js";

let env: Awaited<ReturnType<typeof tempStore>>;
let store: EventStore;
beforeEach(async () => {
  env = await tempStore("spool-knowledge-");
  store = env.store;
});
afterEach(() => env.cleanup());

const task = "t1:0:wf";
const graphEvent = (type: string, data: unknown): NewEvent =>
  onStep("home", task, type, data, "task");
const node = (type: string, id: string, extra: Record<string, unknown> = {}) =>
  graphEvent(type, { kind: "graph", graph: "g1", node: id, ...extra });

/** A thread with one model step, its actions and a workflow run as one of its tasks. */
async function seed(): Promise<void> {
  const step = await startThread(store, "home", "t1");
  const usage = {
    input_tokens: 1200,
    output_tokens: 80,
    cache_read_tokens: 1000,
    cache_write_tokens: 0,
  };
  await store.appendBatch([
    onStep("home", step, "message.completed", {
      format: "anthropic",
      provider: "anthropic",
      model: "claude-test",
      response_id: "msg_1",
      content: [
        { type: "reasoning", text: "The user wants the weather.\nCheck first." },
        { type: "text", text: "Let me look that up | quickly." },
        {
          type: "tool-call",
          id: "toolu_1",
          name: "search",
          input: { q: "weather" },
          input_text: '{"q":"weather"}',
        },
      ],
      usage,
      stop_reason: "tool-use",
      provider_stop_reason: "tool_use",
    }),
    onStep("home", step, "action.dispatched", dispatched("a1", "search")),
    onStep("home", step, "action.succeeded", {
      action_id: "a1",
      attempt: 1,
      output: { temp: 21 },
      duration_ms: 120,
    }),
    onStep("home", step, "action.dispatched", { ...dispatched("a2", "fetch"), mode: "async" }),
    onStep("home", step, "action.failed", {
      action_id: "a2",
      attempt: 1,
      error: { code: "http.404", message: "no such page" },
      duration_ms: 45,
    }),
    graphEvent("graph.started", {
      graph: "g1",
      name: "Daily report",
      nodes: [
        { node: "fetch", name: "Fetch data" },
        { node: "parse", depends_on: ["fetch"] },
        { node: "summarize", name: "Summarize", depends_on: ["parse"] },
        { node: "publish", depends_on: ["summarize"] },
      ],
    }),
    node("step.started", "fetch"),
    node("step.completed", "fetch", { status: "succeeded", duration_ms: 1500 }),
    graphEvent("foreach.completed", {
      graph: "g1",
      node: "fetch",
      items: 10,
      succeeded: 9,
      failed: 1,
      duration_ms: 1400,
    }),
    node("step.started", "parse"),
    node("step.completed", "parse", {
      status: "failed",
      duration_ms: 75_000,
      error: { code: "x", message: "bad" },
    }),
    node("step.started", "summarize"),
    graphEvent("graph.error", {
      graph: "g1",
      node: "parse",
      error: { code: "node.failed", message: "parse failed" },
    }),
    onStep("home", step, "step.completed", {
      kind: "model",
      thread: "t1",
      index: 0,
      provider: "anthropic",
      model: "claude-test",
      usage,
      stop_reason: "tool-use",
      duration_ms: 2300,
    }),
    // Not t1's: another thread's step.
    onStep("home", "t2:0", "step.started", {
      kind: "model",
      thread: "t2",
      index: 0,
      provider: "p",
      model: "m",
    }),
  ]);
}

describe("knowledge markdown", () => {
  it("renders a thread's steps, actions and a node status table", async () => {
    await seed();
    const markdown = renderKnowledge(await readAll(store, "home"), { thread: "t1" });
    expect(markdown).toMatchInlineSnapshot(`
      "# Thread \`t1\`

      **Directive:** \`assistant\` · **Model:** \`claude-test\` · **Status:** 🔄 running

      ## Step 0 · \`claude-test\`

      <details>
      <summary>Reasoning</summary>

      The user wants the weather.
      Check first.

      </details>

      Let me look that up | quickly.

      **Tool call** \`search\` (\`toolu_1\`)

      \`\`\`json
      {"q":"weather"}
      \`\`\`

      **Actions**

      - ✅ \`a1\` tool \`search\`: succeeded in 120 ms → \`{"temp":21}\`
      - ❌ \`a2\` tool \`fetch\`: failed in 45 ms: no such page (http.404)

      _Usage: 1200 input (1000 cached) · 80 output tokens · stop: tool-use · 2.3 s_

      ## Workflow Daily report (\`g1\`)

      | Node | Name | Status | Duration |
      | --- | --- | --- | --- |
      | \`fetch\` | Fetch data | ✅ succeeded | 1.5 s |
      | \`parse\` |  | ❌ error | 1 min 15 s |
      | \`summarize\` | Summarize | 🔄 running |  |
      | \`publish\` |  | ⏳ pending |  |

      - Foreach \`fetch\`: 10 items, 9 succeeded, 1 failed (1.4 s)

      **Status:** ❌ error at \`parse\`: parse failed (node.failed)
      "
    `);
  });

  it("the sink appends text deltas live; a checkpoint re-renders the file from the log", async () => {
    await seed();
    const path = join(env.dir, "knowledge", "t1.md");
    const sink = createKnowledgeSink({ path, thread: "t1" });
    await sink.checkpoint({ store, continuity: "home" });
    const rendered = renderKnowledge(await readAll(store, "home"), { thread: "t1" });
    expect(readFileSync(path, "utf8")).toBe(rendered);

    sink.write({ type: "start", responseId: null, model: "claude-test" });
    for (const text of ["The weather ", "is 21 °C", " and sunny."])
      sink.write({ type: "text", block: 0, text });
    sink.write({ type: "reasoning", block: 1, text: "not appended" });
    await sink.flushed();
    expect(readFileSync(path, "utf8")).toBe(`${rendered}\n\nThe weather is 21 °C and sunny.`);

    // Mid-stream checkpoint: the render, then the message still streaming.
    sink.write({ type: "text", block: 0, text: " More." });
    await sink.checkpoint(await readAll(store, "home"));
    expect(readFileSync(path, "utf8")).toBe(`${rendered}\nThe weather is 21 °C and sunny. More.`);

    // Once the message is in the log and the stream ended, the render alone replaces it all.
    sink.write({ type: "stop", reason: "end", providerReason: null });
    await store.append({
      continuity: "home",
      type: "thread.completed",
      stream: { kind: "thread", id: "t1" },
      data: {},
    });
    await sink.checkpoint({ store, continuity: "home" });
    const final = readFileSync(path, "utf8");
    expect(final).toBe(renderKnowledge(await readAll(store, "home"), { thread: "t1" }));
    expect(final).toContain("**Status:** ✅ completed");
    await sink.close();
  });
});
