/**
 * The dashboard's conversation fold (web/src/fold/conversation.ts) over hand-made logs: a step's
 * text shows exactly once however its deltas were split, dropped or contradicted by the final
 * message; actions carry status and duration; handoffs are one item; worker threads are hidden.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SpoolEvent } from "../src/spec/index.js";
import { ConversationFold, type StepItem } from "../web/src/fold/conversation.js";

const C = "chat";
const T = "th-1";
const STEP = `${T}:0`;
let seq = 0;

function event(type: string, stream: SpoolEvent["stream"], data: unknown): SpoolEvent {
  seq += 1;
  return {
    seq,
    id: `e${seq}`,
    continuity: C,
    stream,
    type,
    ts: new Date(1_770_000_000_000 + seq * 10).toISOString(),
    actor: type === "turn.added" ? "ada" : null,
    origin: null,
    criticality: type === "token.delta" ? "droppable" : "critical",
    data,
    hash: "0".repeat(64),
  };
}

const onStep = (type: string, data: unknown, step = STEP) =>
  event(type, { kind: "step", id: step }, data);
const delta = (text: string) => onStep("token.delta", { block: "text:0", text });
const completed = (text: string) =>
  onStep("message.completed", {
    content: [{ type: "text", text }],
    usage: { input_tokens: 10, output_tokens: 3 },
  });

function fold(events: readonly SpoolEvent[]): ConversationFold {
  const conversation = new ConversationFold();
  for (const one of events) conversation.push(one);
  return conversation;
}

const steps = (conversation: ConversationFold) =>
  conversation.items.filter((item): item is StepItem => item.kind === "step");

const ANSWER = "<thought>Let me think.</thought><response>The answer is **42**.</response>";

/** Cuts `text` at `cuts` (positions, any order). */
function split(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const cut of [...at, text.length]) {
    pieces.push(text.slice(from, cut));
    from = cut;
  }
  return pieces.filter((piece) => piece !== "");
}

describe("the conversation fold", () => {
  it("shows a step's thought and response once, however the deltas were split or dropped", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), fc.nat(), (cuts, keep) => {
        const pieces = split(ANSWER, cuts);
        // Any prefix of the deltas reached the log (the rest were dropped, or not yet read).
        const kept = pieces.slice(0, keep % (pieces.length + 1));
        const conversation = fold([...kept.map(delta), completed(ANSWER)]);
        const [step] = steps(conversation);
        expect(step?.streaming).toBe(false);
        expect(step?.blocks.map(({ kind, text }) => ({ kind, text }))).toEqual([
          { kind: "thought", text: "Let me think." },
          { kind: "response", text: "The answer is **42**." },
        ]);
      }),
    );
  });

  it("streams the response before the message completes", () => {
    const [step] = steps(fold([delta("<response>The answer"), delta(" is")]));
    expect(step?.streaming).toBe(true);
    expect(step?.blocks).toEqual([{ id: 0, kind: "response", text: "The answer is" }]);
  });

  it("replaces streamed text that disagrees with the final message", () => {
    const [step] = steps(
      fold([delta("<response>Draft tex"), completed("<response>Final text.</response>")]),
    );
    expect(step?.blocks.map((block) => block.text)).toEqual(["Final text."]);
  });

  it("keeps each action's status and duration, and resolves $references from its output", () => {
    const conversation = fold([
      onStep("action.dispatched", {
        action_id: "a1",
        type: "tool",
        name: "clock.now",
        parameters: {},
      }),
      onStep("action.succeeded", {
        action_id: "a1",
        attempt: 1,
        output: { day: "Friday" },
        duration_ms: 12,
      }),
      onStep("action.dispatched", {
        action_id: "a2",
        type: "tool",
        name: "fs.read",
        parameters: { path: "x" },
      }),
      onStep("action.failed", {
        action_id: "a2",
        attempt: 1,
        error: { code: "fs", message: "no such file" },
        duration_ms: 3,
      }),
      event("variable.set", { kind: "thread", id: T }, { name: "now", value: { day: "Friday" } }),
      completed("<response>Happy $now.day!</response>"),
    ]);
    const [step] = steps(conversation);
    expect(
      step?.actions.map(({ name, status, durationMs, note }) => ({
        name,
        status,
        durationMs,
        note,
      })),
    ).toEqual([
      { name: "clock.now", status: "succeeded", durationMs: 12, note: undefined },
      { name: "fs.read", status: "failed", durationMs: 3, note: "no such file" },
    ]);
    expect(conversation.substitute(step!, step!.blocks[0]!.text)).toBe("Happy Friday!");
  });

  it("shows a handoff as one item and leaves worker threads out", () => {
    const conversation = fold([
      event("turn.added", { kind: "continuity", id: C }, { text: "hello" }),
      event(
        "thread.started",
        { kind: "thread", id: `${T}@summary1` },
        {
          directive: "thread_summary",
          chain_root: `${T}@summary1`,
          parent: { thread: T, step: STEP, action: "summary1", depth: 1 },
        },
      ),
      onStep("token.delta", { block: "text:0", text: "<response>a summary" }, `${T}@summary1:0`),
      event(
        "thread.continued",
        { kind: "thread", id: T },
        {
          continuation: `${T}.c1`,
          reason: "context pressure",
          pressure_ratio: 0.91,
          tokens_before: 7402,
          tokens_after: 2310,
          summary_tokens: 812,
        },
      ),
    ]);
    expect(conversation.items.map((item) => item.kind)).toEqual(["turn", "handoff"]);
    const handoff = conversation.items[1];
    expect(handoff?.kind === "handoff" && handoff.text).toBe(
      "context handed off to a new thread (pressure 0.91, 7,402 → 2,310 tokens, summary 812 tokens)",
    );
  });
});
