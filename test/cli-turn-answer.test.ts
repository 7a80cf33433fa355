import { describe, expect, it } from "vitest";
import { TurnAnswerWatch } from "../src/cli/commands/continuity-follower.js";
import type { SpoolEvent } from "../src/spec/index.js";

let seq = 0;
function event(type: string, thread: string, data: Record<string, unknown>): SpoolEvent {
  seq += 1;
  return {
    seq,
    id: `01J0000000000000000000${String(seq).padStart(4, "0")}`,
    continuity: "c",
    stream: { kind: "thread", id: thread },
    type,
    ts: "2026-01-01T00:00:00.000Z",
    actor: null,
    origin: null,
    criticality: "critical",
    data,
    hash: "0".repeat(64),
  };
}

describe("TurnAnswerWatch", () => {
  it("follows the run that took a turn across a handoff to its end, ignoring other runs", () => {
    const watch = new TurnAnswerWatch("TURN");
    const usage = {};
    const stream = [
      event("run.started", "th-a", { turn: "OTHER", resumed: false }),
      event("run.completed", "th-a", { turn: "OTHER", status: "completed", usage }),
      event("run.started", "th-a", { turn: "TURN", resumed: false }),
      event("thread.continued", "th-a", { continuation: "th-b" }),
      event("run.completed", "th-a", { turn: "TURN", status: "continued", usage }),
      event("run.started", "th-b", { resumed: false }),
      event("run.completed", "th-b", { status: "completed", result: "the answer", usage }),
    ];
    const answers = stream.map((item) => watch.push(item));
    expect(answers.slice(0, -1).every((answer) => answer === undefined)).toBe(true);
    expect(answers.at(-1)).toEqual({
      status: "completed",
      result: "the answer",
      seq: stream.at(-1)!.seq,
    });
  });
});
