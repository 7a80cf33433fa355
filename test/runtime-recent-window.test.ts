import { describe, expect, it } from "vitest";
import { createTokenEstimator } from "../src/providers/index.js";
import type { ProviderMessage } from "../src/providers/provider.js";
import { compileRecentWindow, type HistoryMessage } from "../src/runtime/index.js";

const estimator = createTokenEstimator();
const model = "claude-sonnet-4-5";
let seq = 0;
const user = (text: string): HistoryMessage => ({
  message: { role: "user", content: text },
  seq: ++seq,
  turn: true,
});
const results = (text: string): HistoryMessage => ({
  message: { role: "user", content: text },
  seq: ++seq,
  turn: false,
});
const assistant = (text: string): HistoryMessage => ({
  message: { role: "assistant", content: text },
  seq: ++seq,
  turn: false,
});
const tool = (id: string): HistoryMessage => ({
  message: { role: "tool", results: [{ toolCallId: id, output: "x".repeat(400) }] },
  seq: ++seq,
  turn: false,
});

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");

function compile(history: HistoryMessage[], budget: number) {
  return compileRecentWindow({ model, system: "You help.", history, budget, estimator });
}

describe("the recent-window compile", () => {
  it("keeps everything that fits, in order, and merges consecutive user messages", () => {
    const history = [user("hi"), assistant("hello"), results("<continue/>"), user("again")];
    const { request, decision } = compile(history, 10_000);
    expect(request.messages.map((message: ProviderMessage) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
    ]);
    expect(request.messages[2]).toEqual({ role: "user", content: "<continue/>\n\nagain" });
    expect(decision).toMatchObject({ strategy: "recent-window", omitted: 0, messages: 3 });
    expect(decision.tokens).toBeLessThanOrEqual(10_000);
  });

  it("drops the oldest messages to fit, starting the window at a user turn", () => {
    const history = [
      user(words(300)),
      assistant(words(300)),
      user("second question"),
      assistant(words(50)),
      results("results"),
      assistant("answer"),
    ];
    const { request, decision } = compile(history, 400);
    expect(decision.omitted).toBe(2);
    expect(request.messages[0]).toEqual({ role: "user", content: "second question" });
    expect(decision.tokens).toBeLessThanOrEqual(400);
  });

  it("always keeps the newest user turn, even over budget", () => {
    const history = [assistant("old"), user(words(2000))];
    const { request, decision } = compile(history, 100);
    expect(request.messages).toEqual([{ role: "user", content: words(2000) }]);
    expect(decision.tokens).toBeGreaterThan(100);
  });

  it("never starts with a tool result whose call was cut off", () => {
    const history = [
      user(words(400)),
      assistant("calling"),
      tool("call_1"),
      assistant("more"),
      tool("call_2"),
      assistant("done"),
    ];
    const { request } = compile(history, 300);
    expect(request.messages[0]!.role).not.toBe("tool");
  });

  it("gives the same request and digest for the same history (replay compares them)", () => {
    const history = [user("a"), assistant("b"), user("c")];
    expect(compile(history, 5000)).toEqual(compile([...history], 5000));
  });
});
