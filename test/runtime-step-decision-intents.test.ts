import { describe, expect, it } from "vitest";
import type { StepSummary } from "../src/actions/index.js";
import { AppendQueue } from "../src/log/append-queue.js";
import { type AssembledMessage, emptyUsage } from "../src/providers/index.js";
import { type AgentStepResult, decide } from "../src/runtime/index.js";
import { type PreparedEvent, prepareEvent } from "../src/spec/index.js";

function outcome(options: {
  cancelled?: boolean;
  error?: boolean;
  final?: boolean;
  responded?: boolean;
}): AgentStepResult {
  const message: AssembledMessage = {
    format: "scripted",
    model: "m",
    responseId: null,
    content: [{ type: "text", text: "<response>done</response>" }],
    usage: emptyUsage(),
    stopReason: options.error ? "cancelled" : "end",
    providerStopReason: null,
    ...(options.error
      ? { error: { code: "provider.cancelled", message: "aborted", retryable: false } }
      : {}),
  };
  const summary: StepSummary = {
    actions: [],
    errors: [],
    cancelled: options.cancelled ?? false,
    final: options.final ?? true,
  };
  return {
    step: "t:0",
    message,
    summary,
    response: "done",
    responded: options.responded ?? true,
    plainText: "",
    nativeCalls: 0,
    concluded: false,
  };
}

const aborted = () => {
  const controller = new AbortController();
  controller.abort();
  return controller.signal;
};

describe("a cancel and the step's decision", () => {
  it("decides a step the runtime saw cancelled, whenever the cancel came before the decision", () => {
    expect(decide(outcome({}), aborted()).decision).toBe("cancel");
    expect(decide(outcome({ cancelled: true })).decision).toBe("cancel");
    expect(decide(outcome({ error: true })).decision).toBe("fail");
    expect(decide(outcome({})).decision).toBe("complete");
    expect(decide(outcome({ final: false })).decision).toBe("continue");
  });
});

const DEFAULTS = {
  now: () => "2026-01-01T00:00:00.000Z",
  newId: () => "01J00000000000000000000000",
};

function prepared(type: string, data: unknown): PreparedEvent {
  return prepareEvent(
    { continuity: "c", stream: { kind: "step", id: "t:0" }, type, data } as never,
    DEFAULTS,
  );
}

const stepStarted = () =>
  prepared("step.started", { kind: "model", thread: "t", index: 0, provider: "p", model: "m" });

/** An append queue whose writes only record, in `order`, the types each one wrote. */
function recordingQueue(order: string[]): AppendQueue {
  return new AppendQueue(
    async (batch) => {
      order.push(`write ${batch.map((event) => event.type).join("+")}`);
      return batch.map((event, i) => ({ ...event, seq: i + 1, hash: "h" }));
    },
    { droppableDelayMs: 50, maxBatch: 100 },
  );
}

describe("intents in the append queue", () => {
  it("starts an intent's write once the appending code waits, before the event loop's turn ends", async () => {
    const order: string[] = [];
    const queue = recordingQueue(order);
    setImmediate(() => order.push("immediate"));
    // A plain critical event waits for the turn's end, with company; an intent does not wait.
    const plain = queue.enqueueOne(prepared("action.started", { action_id: "a0", attempt: 1 }));
    const intent = queue.enqueueOne(stepStarted());
    await Promise.all([plain, intent]);
    order.push("durable");
    expect(order).toEqual(["write action.started+step.started", "durable"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order.at(-1)).toBe("immediate");
  });

  it("writes a plain critical event after the event loop's turn", async () => {
    const order: string[] = [];
    const queue = recordingQueue(order);
    setImmediate(() => order.push("immediate"));
    await queue.enqueueOne(prepared("action.started", { action_id: "a0", attempt: 1 }));
    expect(order).toEqual(["immediate", "write action.started"]);
  });
});
