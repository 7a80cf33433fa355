import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import type { ProviderErrorInfo } from "../src/providers/provider-error.js";
import type { StreamPart } from "../src/providers/stream-part.js";
import {
  createLogSink,
  createReturnSink,
  createSinkFanout,
  createTranscriptSink,
  rebuildTranscript,
  type SinkReport,
} from "../src/transcript/index.js";
import {
  dispatched,
  lines,
  onStep,
  readAll,
  sampleDeltas,
  startThread,
  stepStarted,
  tempStore,
  textParts,
} from "./support/transcripts.js";

let env: Awaited<ReturnType<typeof tempStore>>;
let store: EventStore;
beforeEach(async () => {
  env = await tempStore();
  store = env.store;
});
afterEach(() => env.cleanup());

/** The sinks of one step, as the runtime wires them. */
function stepSinks(step: string, path: string) {
  const reports: SinkReport[] = [];
  const transcript = createTranscriptSink({ store, continuity: "home", thread: "t1", path });
  const returned = createReturnSink({ format: "anthropic" });
  const log = createLogSink({
    store,
    continuity: "home",
    step,
    provider: "anthropic",
    format: "anthropic",
  });
  const fanout = createSinkFanout({
    sinks: [log, transcript, returned.sink],
    onReport: (report) => reports.push(report),
  });
  return { fanout, log, transcript, returned, reports };
}

describe("log sink and live transcript", () => {
  it("a streamed step lands in the log and in transcript.jsonl exactly as a rebuild gives it", async () => {
    const step = await startThread(store, "home", "t1");
    // Another thread and another continuity write meanwhile; neither belongs to t1's transcript.
    await store.append(stepStarted("home", "t2", 0));
    const path = join(env.dir, "threads", "t1", "transcript.jsonl");
    const { fanout, log, transcript, returned, reports } = stepSinks(step, path);

    const deltas = sampleDeltas(200);
    const [start, ...rest] = textParts(deltas);
    fanout.push(start!);
    for (const [index, part] of rest.slice(0, 200).entries()) {
      fanout.push(part);
      if (index % 50 === 49) {
        // Whoever appends other events of the step flushes the log sink's deltas first, so the
        // log keeps stream order.
        log.flush();
        await store.append(onStep("home", step, "action.dispatched", dispatched(`a${index}`)));
        await store.append(
          onStep(
            "home",
            `${step}:a${index}`,
            "action.succeeded",
            {
              action_id: `a${index}`,
              attempt: 1,
              output: { hits: index },
              duration_ms: 3,
            },
            "task",
          ),
        );
        await store.append(onStep("home", "t2:0", "token.delta", { block: "text:0", text: "x" }));
        await store.append({
          continuity: "other",
          type: "turn.added",
          actor: "bob",
          origin: "test",
          data: { text: "elsewhere" },
        });
      }
      if (index === 120) {
        // Live: the file already holds what the log has, before the step ends.
        log.flush();
        await store.flush();
        await transcript.caughtUp(await store.head());
        const live = readFileSync(path);
        expect(live.equals(await rebuildTranscript(store, "home", "t1"))).toBe(true);
        expect(lines(live).filter((line) => line.type === "token_delta")).toHaveLength(121);
      }
    }
    const tool: StreamPart[] = [
      { type: "tool-call-start", block: 1, id: "toolu_1", name: "search" },
      ...['{"q":', '"wea', "ther", ' in é"', "}"].map(
        (inputText): StreamPart => ({
          type: "tool-call-delta",
          block: 1,
          id: "toolu_1",
          inputText,
        }),
      ),
      {
        type: "tool-call-end",
        block: 1,
        id: "toolu_1",
        inputText: '{"q":"weather in é"}',
        input: { q: "weather in é" },
      },
    ];
    for (const part of [...tool, ...rest.slice(200)]) fanout.push(part);
    expect(await fanout.close()).toEqual([]);
    expect(reports).toEqual([]);

    const live = readFileSync(path);
    const rebuilt = await rebuildTranscript(store, "home", "t1");
    expect(live.equals(rebuilt)).toBe(true);

    const deltaLines = lines(live).filter((line) => line.type === "token_delta");
    expect(deltaLines.filter((line) => line.block === "text:0").map((line) => line.text)).toEqual(
      deltas,
    );
    expect(deltaLines.filter((line) => line.block === "tool:1").map((line) => line.text)).toEqual([
      '{"q":',
      '"wea',
      "ther",
      ' in é"',
      "}",
    ]);
    expect(new Set(deltaLines.map((line) => line.step))).toEqual(new Set([step]));
    expect(lines(live).some((line) => line.type === "turn.added")).toBe(false);
    expect(lines(live).filter((line) => line.type === "action.succeeded")).toHaveLength(4);

    const events = await readAll(store, "home");
    const tokenEvents = events.filter((e) => e.type === "token.delta" && e.stream.id === step);
    expect(tokenEvents.length).toBeLessThan(205);
    expect(tokenEvents.length).toBeGreaterThanOrEqual(5);
    const completed = events.filter((e) => e.type === "message.completed");
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data).toEqual({
      format: "anthropic",
      provider: "anthropic",
      model: "claude-test",
      response_id: "msg_1",
      content: [
        { type: "text", text: deltas.join("") },
        {
          type: "tool-call",
          id: "toolu_1",
          name: "search",
          input: { q: "weather in é" },
          input_text: '{"q":"weather in é"}',
        },
      ],
      usage: { input_tokens: 12, output_tokens: 200, cache_read_tokens: 0, cache_write_tokens: 0 },
      stop_reason: "end",
      provider_stop_reason: "end_turn",
    });
    // message.completed comes after every delta of its step.
    const lastDelta = tokenEvents.at(-1)!.seq;
    expect(completed[0]!.seq).toBeGreaterThan(lastDelta);
    const message = await returned.message();
    expect(message.content[0]).toEqual({ type: "text", text: deltas.join("") });
  });

  it("an error part logs message.partial and message.failed; the transcript still matches", async () => {
    const step = await startThread(store, "home", "t1");
    const path = join(env.dir, "t1.jsonl");
    const { fanout, returned } = stepSinks(step, path);
    const error: ProviderErrorInfo = {
      code: "provider.overloaded",
      message: "overloaded",
      retryable: true,
      status: 529,
    };
    const stream: StreamPart[] = [
      { type: "retry", attempt: 1, delayMs: 250, error },
      { type: "start", responseId: "msg_2", model: "claude-test" },
      { type: "reasoning", block: 0, text: "thinking…" },
      { type: "text", block: 1, text: "Half an ans" },
      {
        type: "error",
        error: { ...error, message: "connection reset", code: "provider.connection" },
      },
    ];
    for (const part of stream) fanout.push(part);
    expect(await fanout.close()).toEqual([]);

    const events = (await readAll(store, "home")).filter((e) => e.stream.id === step);
    expect(events.map((e) => e.type)).toEqual([
      "step.started",
      "provider.retrying",
      "token.delta",
      "token.delta",
      "message.partial",
      "message.failed",
    ]);
    expect(events[1]!.data).toEqual({
      attempt: 1,
      delay_ms: 250,
      error: { code: "provider.overloaded", message: "overloaded", retryable: true, status: 529 },
    });
    expect(events[5]!.data).toEqual({
      error: {
        code: "provider.connection",
        message: "connection reset",
        retryable: true,
        status: 529,
      },
      partial: true,
    });
    expect((events[4]!.data as { content: unknown }).content).toEqual([
      { type: "reasoning", text: "thinking…" },
      { type: "text", text: "Half an ans" },
    ]);
    expect(readFileSync(path).equals(await rebuildTranscript(store, "home", "t1"))).toBe(true);
    expect((await returned.message()).stopReason).toBe("error");
  });

  it("an error before any content logs only message.failed with partial false", async () => {
    const step = await startThread(store, "home", "t1");
    const { fanout } = stepSinks(step, join(env.dir, "t1.jsonl"));
    fanout.push({ type: "start", responseId: null, model: "m" });
    fanout.push({
      type: "error",
      error: { code: "provider.cancelled", message: "aborted", retryable: false },
    });
    await fanout.close();
    const events = (await readAll(store, "home")).filter((e) => e.stream.id === step);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ["step.started", expect.anything()],
      [
        "message.failed",
        {
          error: { code: "provider.cancelled", message: "aborted", retryable: false },
          partial: false,
        },
      ],
    ]);
  });

  it("a log sink whose store is closed fails without crashing the stream", async () => {
    const step = await startThread(store, "home", "t1");
    const reports: SinkReport[] = [];
    const returned = createReturnSink();
    const fanout = createSinkFanout({
      sinks: [
        createLogSink({ store, continuity: "home", step, provider: "p", format: "scripted" }),
        returned.sink,
      ],
      onReport: (report) => reports.push(report),
    });
    await store.close();
    for (const part of textParts(["a", "b"])) fanout.push(part);
    const final = await fanout.close();
    expect(final).toEqual([
      expect.objectContaining({ kind: "failed", sink: "log", code: "store.closed" }),
    ]);
    expect((await returned.message()).content).toEqual([{ type: "text", text: "ab" }]);
  });
});
