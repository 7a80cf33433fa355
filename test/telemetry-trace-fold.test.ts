/**
 * The fold from log events to spans, over a hand-written log in a real SQLite store (times
 * given, so spans' times are exact): a child agent nests under the action that spawned it, an
 * action rejected before dispatch is a failed span of no length, a provider retry is a span
 * event, and a run a crash cut off ends at its own last event as interrupted once recovery
 * names it, beside the resumed run in the same trace. Folding the same log twice gives the same
 * spans (ids included).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import type { AnyNewEvent } from "../src/spec/index.js";
import {
  ATTR,
  readTraces,
  type SpanNode,
  spanTrees,
  traceIdOf,
  UNFINISHED,
} from "../src/telemetry/index.js";
import { collect } from "./support/events.js";
import { outline } from "./support/trace-spans.js";

const C = "fold";
const at = (second: number) => `2026-01-02T03:04:${String(second).padStart(2, "0")}.000Z`;
const usage = { input_tokens: 10, output_tokens: 2, cache_read_tokens: 4, cache_write_tokens: 1 };
const message = (model: string) => ({
  format: "anthropic" as const,
  provider: "anthropic",
  model,
  response_id: "msg_1",
  content: [{ type: "text" as const, text: "done" }],
  usage: { ...usage, reasoning_tokens: 3 },
  stop_reason: "end" as const,
  provider_stop_reason: "end_turn",
});
const thread = (id: string) => ({ kind: "thread" as const, id });
const step = (id: string) => ({ kind: "step" as const, id });
const model = (thread: string, index: number) => ({
  kind: "model" as const,
  thread,
  index,
  provider: "anthropic",
  model: "claude-x",
});
const finished = (thread: string, index: number, ts: number): AnyNewEvent[] => [
  {
    continuity: C,
    stream: step(`${thread}:${index}`),
    ts: at(ts),
    type: "message.completed",
    data: message("claude-x-1"),
  },
  {
    continuity: C,
    stream: step(`${thread}:${index}`),
    ts: at(ts),
    type: "step.completed",
    data: { ...model(thread, index), usage, stop_reason: "end", duration_ms: 1 },
  },
];

describe("the trace fold", () => {
  let dir: string;
  let store: EventStore;
  let turn: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "spool-fold-"));
    store = await openEventStore({ db: dir, env: {} });
    const added = await store.append({
      continuity: C,
      type: "turn.added",
      actor: "ada",
      origin: "cli",
      ts: at(0),
      data: { text: "go" },
    });
    turn = added.id;
    const run = { turn, directive: "assistant", model: "claude-x" };
    const events: AnyNewEvent[] = [
      {
        continuity: C,
        stream: thread("th-a"),
        ts: at(1),
        type: "thread.started",
        data: { directive: "assistant", chain_root: "th-a", turn },
      },
      {
        continuity: C,
        stream: thread("th-a"),
        ts: at(1),
        type: "run.started",
        data: { ...run, resumed: false, next_step: 0 },
      },
      {
        continuity: C,
        stream: step("th-a:0"),
        ts: at(2),
        type: "step.started",
        data: model("th-a", 0),
      },
      {
        continuity: C,
        stream: step("th-a:0"),
        ts: at(3),
        type: "provider.retrying",
        data: {
          attempt: 1,
          delay_ms: 10,
          error: { code: "provider.overloaded", message: "busy", retryable: true },
        },
      },
      {
        continuity: C,
        stream: step("th-a:0"),
        ts: at(4),
        type: "action.dispatched",
        data: {
          action_id: "k1",
          type: "agent",
          mode: "sync",
          name: "helper",
          parameters: {},
          depends_on: [],
          retry: 0,
          on_error: "fail",
          in_thought: false,
        },
      },
      {
        continuity: C,
        stream: step("th-a:0"),
        ts: at(4),
        type: "action.skipped",
        data: { action_id: "x9", reason: "not-allowed", message: "shell.run is not allowed" },
      },
      {
        continuity: C,
        stream: thread("th-b"),
        ts: at(5),
        type: "thread.started",
        data: {
          directive: "helper",
          chain_root: "th-b",
          parent: { thread: "th-a", step: "th-a:0", action: "k1", depth: 1 },
        },
      },
      {
        continuity: C,
        stream: thread("th-b"),
        ts: at(5),
        type: "run.started",
        data: {
          directive: "helper",
          model: "claude-x",
          input: "do it",
          resumed: false,
          next_step: 0,
        },
      },
      {
        continuity: C,
        stream: step("th-b:0"),
        ts: at(6),
        type: "step.started",
        data: model("th-b", 0),
      },
      ...finished("th-b", 0, 7),
      {
        continuity: C,
        stream: thread("th-b"),
        ts: at(8),
        type: "run.completed",
        data: { status: "completed", steps: 1, usage, cost_usd: 0.5, result: "ok" },
      },
      {
        continuity: C,
        stream: step("th-a:0"),
        ts: at(9),
        type: "action.succeeded",
        data: { action_id: "k1", attempt: 1, output: "ok", duration_ms: 5 },
      },
      ...finished("th-a", 0, 10),
      {
        continuity: C,
        stream: step("th-a:1"),
        ts: at(11),
        type: "step.started",
        data: model("th-a", 1),
      },
      // The process died here; another one recovers the continuity.
      {
        continuity: C,
        stream: { kind: "continuity", id: C },
        ts: at(20),
        type: "recovery.started",
        data: { open_runs: ["th-a"], waiting_turns: 0 },
      },
      {
        continuity: C,
        stream: step("th-a:1"),
        ts: at(20),
        type: "step.interrupted",
        data: { reason: "cut off by a crash" },
      },
      {
        continuity: C,
        stream: thread("th-a"),
        ts: at(21),
        type: "run.started",
        data: { ...run, resumed: true, next_step: 2 },
      },
      {
        continuity: C,
        stream: thread("th-a"),
        ts: at(22),
        type: "run.completed",
        data: {
          turn,
          status: "failed",
          steps: 1,
          usage,
          cost_usd: 0,
          error: { code: "provider.refused", message: "no" },
        },
      },
    ];
    await store.appendBatch(events);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("nests, fails and interrupts spans as the log says, at the log's times", async () => {
    const spans = await collect(readTraces(store, C));
    const trees = spanTrees(spans);
    expect(outline(trees)).toEqual([
      "trace",
      "  invoke_agent assistant !",
      "    chat claude-x",
      "    chat claude-x !",
      "    execute_tool helper",
      "      invoke_agent helper",
      "        chat claude-x",
      "    execute_tool x9 !",
      "  invoke_agent assistant !",
    ]);
    expect(trees[0]!.traceId).toBe(traceIdOf(C, `turn:${turn}`));
    const [crashed, resumed] = trees[0]!.roots as [SpanNode, SpanNode];
    expect([crashed.startTime, crashed.endTime]).toEqual([at(1), at(11)]);
    expect(crashed.status.message).toContain("interrupted");
    expect(crashed.attributes[ATTR.errorType]).toBe("spool.interrupted");
    expect(resumed.attributes[ATTR.runResumed]).toBe(true);
    expect(resumed.status).toEqual({ code: "error", message: "no" });
    expect(resumed.attributes[ATTR.errorType]).toBe("provider.refused");

    const byName = (name: string) => spans.filter((span) => span.name === name);
    const [first, cut] = byName("chat claude-x").filter(
      (span) => span.attributes[ATTR.threadId] === "th-a",
    );
    expect([first!.startTime, first!.endTime]).toEqual([at(2), at(10)]);
    expect(first!.events).toEqual([
      {
        name: "spool.provider.retry",
        time: at(3),
        attributes: { "spool.retry.attempt": 1, [ATTR.errorType]: "provider.overloaded" },
      },
    ]);
    expect(first!.attributes).toMatchObject({
      [ATTR.providerName]: "anthropic",
      [ATTR.requestModel]: "claude-x",
      [ATTR.responseModel]: "claude-x-1",
      [ATTR.responseId]: "msg_1",
      [ATTR.finishReasons]: ["end_turn"],
      [ATTR.inputTokens]: 10,
      [ATTR.outputTokens]: 2,
      [ATTR.cacheReadTokens]: 4,
      [ATTR.cacheCreationTokens]: 1,
      [ATTR.reasoningTokens]: 3,
    });
    expect([cut!.startTime, cut!.endTime, cut!.status.code]).toEqual([at(11), at(11), "error"]);
    const [skipped] = byName("execute_tool x9");
    expect(skipped!.attributes[ATTR.errorType]).toBe("skipped.not-allowed");
    expect([skipped!.startTime, skipped!.endTime]).toEqual([at(4), at(4)]);
    const [helper] = byName("invoke_agent helper");
    const [action] = byName("execute_tool helper");
    expect(helper!.parentSpanId).toBe(action!.spanId);
    expect(helper!.attributes[ATTR.costUsd]).toBe(0.5);
    expect(action!.attributes[ATTR.actionType]).toBe("agent");

    expect(await collect(readTraces(store, C))).toEqual(spans);
  });

  it("ends a run the log leaves open at its last event, as unfinished", async () => {
    const until = (await store.continuity(C))!.lastSeq - 4; // up to the step the crash cut
    const spans = await collect(readTraces(store, C, { until }));
    const run = spans.find((span) => span.name === "invoke_agent assistant")!;
    expect([run.endTime, run.status.message]).toEqual([at(11), UNFINISHED]);
    expect(
      spans
        .filter((span) => span.status.code === "error")
        .map((span) => span.name)
        .sort(),
    ).toEqual(["chat claude-x", "execute_tool x9", "invoke_agent assistant"]);
  });

  it("keeps a run handed off mid-run and its continuation in one trace, under the handoff", async () => {
    const M = "mid";
    const added = await store.append({
      continuity: M,
      type: "turn.added",
      actor: "ada",
      origin: "cli",
      ts: at(0),
      data: { text: "a long paste" },
    });
    const run = { directive: "assistant", model: "claude-x", resumed: false, next_step: 0 };
    const closed = { steps: 0, usage, cost_usd: 0 };
    await store.appendBatch([
      {
        continuity: M,
        stream: thread("th-m"),
        ts: at(1),
        type: "thread.started",
        data: { directive: "assistant", chain_root: "th-m", turn: added.id },
      },
      {
        continuity: M,
        stream: thread("th-m"),
        ts: at(1),
        type: "run.started",
        data: { ...run, turn: added.id },
      },
      {
        continuity: M,
        stream: thread("th-m"),
        ts: at(2),
        type: "handoff.started",
        data: {
          continuation: "th-m.c1",
          reason: "too long",
          tokens_used: 100,
          max_tokens: 50,
          pressure_ratio: 2,
          summarizer: "thread_summary",
          attempt: 1,
        },
      },
      {
        continuity: M,
        stream: thread("th-m"),
        ts: at(3),
        type: "run.completed",
        data: { ...closed, turn: added.id, status: "continued" },
      },
      {
        continuity: M,
        stream: thread("th-m.c1"),
        ts: at(4),
        type: "thread.started",
        data: { directive: "assistant", chain_root: "th-m", continuation_of: "th-m" },
      },
      {
        continuity: M,
        stream: thread("th-m"),
        ts: at(4),
        type: "thread.continued",
        data: { continuation: "th-m.c1", reason: "too long", mode: "summary" },
      },
      { continuity: M, stream: thread("th-m.c1"), ts: at(5), type: "run.started", data: run },
      {
        continuity: M,
        stream: thread("th-m.c1"),
        ts: at(6),
        type: "run.completed",
        data: { ...closed, status: "completed" },
      },
    ]);
    const trees = spanTrees(await collect(readTraces(store, M)));
    expect(outline(trees)).toEqual([
      "trace",
      "  invoke_agent assistant",
      "    handoff assistant",
      "      invoke_agent assistant",
    ]);
    const handoff = trees[0]!.roots[0]!.children[0]!;
    const continuation = handoff.children[0]!;
    expect([handoff.startTime, handoff.endTime]).toEqual([at(2), at(4)]);
    expect(handoff.attributes[ATTR.handoffContinuation]).toBe("th-m.c1");
    expect(continuation.attributes[ATTR.threadId]).toBe("th-m.c1");
    expect(continuation.attributes[ATTR.agentId]).toBe("th-m");
    expect(continuation.links).toEqual([
      { traceId: handoff.traceId, spanId: handoff.spanId, attributes: { "spool.link": "handoff" } },
    ]);
  });
});
