import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createLogSink } from "../src/transcript/index.js";
import { dispatched, onStep, readAll, startThread, tempStore } from "./support/transcripts.js";

let store: EventStore;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-log-sink-"));
});
afterEach(async () => {
  await cleanup();
});

describe("log sink batching", () => {
  it("appends the deltas of one turn of the event loop as one event that keeps each delta's length", async () => {
    const step = await startThread(store, "home", "t1");
    const log = createLogSink({
      store,
      continuity: "home",
      step,
      provider: "p",
      format: "scripted",
    });
    void log.write({ type: "start", responseId: null, model: "m" });
    for (const text of ["Hel", "lo", " wörld 😀"]) void log.write({ type: "text", block: 0, text });
    void log.write({ type: "reasoning", block: 1, text: "hm" });
    await log.write({ type: "stop", reason: "end", providerReason: null });
    await log.close();
    // After a stop the sink waits for nothing: its `message.completed` carries the deltas before it.
    await log.completed();
    const deltas = (await readAll(store, "home")).filter((event) => event.type === "token.delta");
    expect(deltas.map((event) => event.data)).toEqual([
      { block: "text:0", text: "Hello wörld 😀", deltas: [3, 2, 9] },
      { block: "reasoning:1", text: "hm" },
    ]);
  });

  it("keeps stream order with other events of the step when they flush it first", async () => {
    const step = await startThread(store, "home", "t1");
    const log = createLogSink({
      store,
      continuity: "home",
      step,
      provider: "p",
      format: "scripted",
    });
    void log.write({ type: "start", responseId: null, model: "m" });
    void log.write({ type: "text", block: 0, text: "before " });
    log.flush();
    await store.append(onStep("home", step, "action.dispatched", dispatched("a1")));
    void log.write({ type: "text", block: 0, text: "after" });
    await log.write({ type: "stop", reason: "end", providerReason: null });
    await log.close();
    await log.completed();
    const types = (await readAll(store, "home"))
      .filter((event) => event.stream.id === step)
      .map((event) =>
        event.type === "token.delta"
          ? `delta:${(event.data as { text: string }).text}`
          : event.type,
      );
    expect(types).toEqual([
      "step.started",
      "delta:before ",
      "action.dispatched",
      "delta:after",
      "message.completed",
    ]);
  });

  it("appends buffered deltas at the end of the turn without being asked", async () => {
    const step = await startThread(store, "home", "t1");
    const log = createLogSink({
      store,
      continuity: "home",
      step,
      provider: "p",
      format: "scripted",
    });
    void log.write({ type: "start", responseId: null, model: "m" });
    void log.write({ type: "text", block: 0, text: "soon" });
    await new Promise<void>((resolve) => setImmediate(resolve));
    await store.flush();
    const deltas = (await readAll(store, "home")).filter((event) => event.type === "token.delta");
    expect(deltas.map((event) => event.data)).toEqual([{ block: "text:0", text: "soon" }]);
    await log.close();
  });
});
