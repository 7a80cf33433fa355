/**
 * `compileContext` on hand-written thread histories: what it keeps, drops and adds, each case
 * checked exactly; and what it costs (token counts) over a very long history.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  type ContextMessage,
  type ContextPolicy,
  compileContext,
  HANDOFF_HEADING,
  type PinnedItem,
  type SummaryItem,
  type ThreadView,
} from "../src/continuity/index.js";
import type { ProviderMessage } from "../src/providers/index.js";
import { createTokenEstimator, type TokenEstimator } from "../src/providers/tokens/index.js";
import { canonicalJson } from "../src/spec/index.js";
import {
  BPE_MODEL,
  callIds,
  catalogue,
  compile,
  DIRECTIVE,
  estimator,
  FS_READ,
  MODEL,
  summary,
  textOf,
} from "./support/context-compiles.js";
import {
  cloneView,
  FROM_THREAD,
  HistoryBuilder,
  newestTurnOf,
  OWN_THREAD,
} from "./support/context-histories.js";

/** A view of `messages` (the newest turn found), with optional summaries and pins. */
function viewOf(
  messages: ContextMessage[],
  extra: { summaries?: SummaryItem[]; pinned?: PinnedItem[] } = {},
): ThreadView {
  return {
    thread: OWN_THREAD,
    messages,
    newestTurn: newestTurnOf(messages),
    summaries: extra.summaries ?? [],
    pinned: extra.pinned ?? [],
  };
}

/** A tiny history DSL: `turn`, `said`, `results`, `calls`, `outputs` give messages in order. */
function history() {
  let seq = 0;
  const messages: ContextMessage[] = [];
  const push = (message: ProviderMessage, turn = false, thread?: string) => {
    messages.push({ message, seq: ++seq, turn, ...(thread ? { thread } : {}) });
    return api;
  };
  const api = {
    messages,
    turn: (text: string, thread?: string) => push({ role: "user", content: text }, true, thread),
    results: (text: string) => push({ role: "user", content: text }),
    said: (text: string) => push({ role: "assistant", content: text }),
    calls: (text: string, ...ids: string[]) =>
      push({
        role: "assistant",
        content: [
          { type: "text", text },
          ...ids.map((id) => ({
            type: "tool-call" as const,
            id,
            name: "fs_read",
            inputText: `{"path":"${id}"}`,
            input: { path: id },
          })),
        ],
      }),
    outputs: (output: string, ...ids: string[]) =>
      push({
        role: "tool",
        results: ids.map((id) => ({ toolCallId: id, name: "fs_read", output })),
      }),
  };
  return api;
}

const words = (n: number, tag = "word") =>
  Array.from({ length: n }, (_, i) => `${tag}${i}`).join(" ");

describe("compileContext: examples", () => {
  it("keeps everything that fits, in order, and merges consecutive user messages", () => {
    const { messages } = history().turn("hi").said("hello").results("<continue/>").turn("again");
    const bundle = compile(viewOf(messages), { budget: 10_000 });
    expect(bundle.request.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "<continue/>\n\nagain" },
    ]);
    expect(bundle).toMatchObject({ omitted: 0, messages: 4, overBudget: false, budget: 10_000 });
    expect(bundle.tokens).toBeLessThanOrEqual(10_000);
  });

  it("drops the oldest messages to fit, starting the window at a user message", () => {
    const { messages } = history()
      .turn(words(300))
      .said(words(300))
      .turn("second question")
      .said(words(50))
      .results("results")
      .said("answer");
    const bundle = compile(viewOf(messages), { budget: 400 });
    expect(bundle.omitted).toBe(2);
    expect(bundle.request.messages[0]).toEqual({ role: "user", content: "second question" });
    expect(bundle.tokens).toBeLessThanOrEqual(400);
    expect(bundle.overBudget).toBe(false);
  });

  it("always keeps the newest user turn, and says when it is over budget", () => {
    const { messages } = history().said("old").turn(words(2000));
    const bundle = compile(viewOf(messages), { budget: 100 });
    expect(bundle.request.messages).toEqual([{ role: "user", content: words(2000) }]);
    expect(bundle.tokens).toBeGreaterThan(100);
    expect(bundle.overBudget).toBe(true);
  });

  it("leaves out an older turn that does not fit whole: never a part of it", () => {
    const old = words(400, "old");
    const { messages } = history().turn(old).said("done").turn("next question");
    const bundle = compile(viewOf(messages), { budget: 200 });
    const sent = JSON.stringify(bundle.request.messages);
    expect(sent).not.toContain("old0");
    expect(sent).not.toContain("old399");
    expect(bundle.request.messages[0]).toEqual({ role: "user", content: "next question" });
  });

  it("never starts with a tool result whose call was cut off", () => {
    const { messages } = history()
      .turn(words(400))
      .calls("calling", "call_1")
      .outputs("x".repeat(400), "call_1")
      .calls("more", "call_2")
      .outputs("y".repeat(400), "call_2")
      .said("done");
    const bundle = compile(viewOf(messages), { budget: 300 });
    expect(bundle.request.messages[0]!.role).not.toBe("tool");
  });

  it("takes or leaves a call and its results together, even when the results alone would fit", () => {
    const { messages } = history()
      .turn("read them")
      .calls(words(300), "call_1")
      .outputs("small", "call_1")
      .results("ok")
      .turn("and now?");
    const view = viewOf(messages, { summaries: [summary(1, "Earlier work.")] });
    // Room for the results and the text after them, not for the assistant message's 300 words.
    const bundle = compile(view, { budget: 200 });
    const roles = bundle.request.messages.map((message) => message.role);
    expect(roles).not.toContain("tool");
    expect(roles).not.toContain("assistant");
    const roomy = compile(view, { budget: 5000 });
    const at = roomy.request.messages.findIndex((message) => message.role === "assistant");
    expect(callIds(roomy.request.messages[at])).toEqual(["call_1"]);
    expect(roomy.request.messages[at + 1]).toEqual(messages[2]!.message);
  });

  it("puts the directive and every pinned rule and fact in the system prompt", () => {
    const { messages } = history().turn("hello");
    const pinned: PinnedItem[] = [
      { id: "p1", kind: "fact", text: "The repository is at /srv/app." },
      { id: "p2", kind: "rule", text: "Never push to main." },
      { id: "p3", kind: "rule", text: "Run the tests\nbefore every commit." },
    ];
    const bundle = compile(viewOf(messages, { pinned }), { budget: 30 });
    const system = bundle.request.system!;
    expect(system.startsWith(DIRECTIVE.system)).toBe(true);
    const rules = system.indexOf("# Pinned rules");
    const facts = system.indexOf("# Pinned facts");
    expect(rules).toBeGreaterThan(0);
    expect(facts).toBeGreaterThan(rules);
    expect(system.indexOf("Never push to main.")).toBeGreaterThan(rules);
    expect(system.indexOf("Never push to main.")).toBeLessThan(facts);
    expect(system.indexOf("The repository is at /srv/app.")).toBeGreaterThan(facts);
    // A text of several lines is one list item: its later lines are indented under it.
    expect(system).toContain("- Run the tests\n  before every commit.");
    expect(bundle.pinned).toEqual(["p1", "p2", "p3"]);
    expect(bundle.parts.pinned).toBeGreaterThan(0);
    // Pinned items are mandatory: a budget too small for them makes the bundle over budget.
    expect(bundle.overBudget).toBe(true);
  });

  it("starts with the summary chain, then the feeds, when the lineage has summaries", () => {
    const { messages } = history()
      .turn("carried turn", FROM_THREAD)
      .said("carried answer")
      .turn("now this");
    messages[1]!.thread = FROM_THREAD;
    const view = viewOf(messages, {
      summaries: [summary(1, "First part."), summary(2, "Second.")],
    });
    const bundle = compile(view, {
      budget: 5000,
      summaryTokens: 1000,
      feeds: "  branch: main\n",
    });
    const first = textOf(bundle.request.messages[0]);
    expect(first.startsWith(HANDOFF_HEADING)).toBe(true);
    expect(first).toContain("### Summary 1 of 2");
    expect(first).toContain("First part.");
    expect(first).toContain("## Context feeds\n\nbranch: main\n\ncarried turn");
    expect(bundle.summaries).toEqual([`${FROM_THREAD}@summary1`, `${FROM_THREAD}@summary2`]);
    expect(bundle.feeds).toBe(createHash("sha256").update("branch: main").digest("hex"));
    expect(bundle.ranges).toEqual([
      { thread: FROM_THREAD, from_seq: 1, to_seq: 2 },
      { thread: OWN_THREAD, from_seq: 3, to_seq: 3 },
    ]);
  });

  it("keeps the newest summary even over budget, older links only within summaryTokens", () => {
    const { messages } = history().turn("go on");
    const chain = [summary(1, words(200, "a")), summary(2, words(200, "b")), summary(3, "short")];
    const view = viewOf(messages, { summaries: chain });
    expect(compile(view, { budget: 10 })).toMatchObject({
      summaries: [chain[2]!.id],
      overBudget: true,
    });
    expect(compile(view, { budget: 100_000 }).summaries).toEqual([chain[2]!.id]);
    expect(compile(view, { budget: 100_000, summaryTokens: 400 }).summaries).toEqual([
      chain[1]!.id,
      chain[2]!.id,
    ]);
    expect(compile(view, { budget: 100_000, summaryTokens: 100_000 }).summaries).toEqual(
      chain.map((item) => item.id),
    );
  });

  it("includes the feeds only when they fit their allowance and the budget", () => {
    const { messages } = history().turn("status?");
    const view = viewOf(messages);
    const feeds = words(100, "feed");
    expect(compile(view, { budget: 10_000, feeds }).feeds).toBeDefined();
    expect(compile(view, { budget: 10_000, feeds, feedsTokens: 50 }).feeds).toBeUndefined();
    // A quarter of the budget by default.
    expect(compile(view, { budget: 600, feeds }).feeds).toBeUndefined();
    expect(compile(view, { budget: 150, feeds, feedsTokens: 10_000 }).feeds).toBeUndefined();
    expect(compile(view, { budget: 800, feeds, feedsTokens: 790 }).feeds).toBeDefined();
    expect(compile(view, { budget: 10_000, feeds: " \n " }).feeds).toBeUndefined();
  });

  it("names the included messages by seq range, per thread", () => {
    const { messages } = history()
      .turn("carried", FROM_THREAD)
      .turn("first")
      .said("answer")
      .turn("second");
    const bundle = compile(viewOf(messages), { budget: 10_000 });
    expect(bundle.ranges).toEqual([
      { thread: FROM_THREAD, from_seq: 1, to_seq: 1 },
      { thread: OWN_THREAD, from_seq: 2, to_seq: 4 },
    ]);
  });

  // A step's `tool` results and its results text come from the same `loop.decided` event (they
  // share a seq): they are one unit with the call before them, so a range never names a message
  // that was left out.
  it("never starts a range at an event whose messages were partly left out", () => {
    const { messages } = history()
      .turn("read it")
      .calls(words(300), "c1")
      .outputs("small", "c1")
      .results("results")
      .turn("next");
    messages[3]!.seq = messages[2]!.seq;
    const bundle = compile(viewOf(messages), { budget: 60 });
    expect(bundle.request.messages).toEqual([{ role: "user", content: "next" }]);
    const start = bundle.ranges[0]!.from_seq;
    for (const entry of messages.slice(0, bundle.omitted)) expect(entry.seq).toBeLessThan(start);
  });

  it("gives the same request and digest for the same input, and another for another", () => {
    const { messages } = history().turn("a").said("b").turn("c");
    const view = viewOf(messages, { pinned: [{ id: "p", kind: "rule", text: "Be brief." }] });
    const policy = { budget: 5000, feeds: "x", maxOutputTokens: 1024 };
    const bundle = compile(view, policy, { ...DIRECTIVE, tools: [FS_READ] });
    expect(compile(cloneView(view), policy, { ...DIRECTIVE, tools: [FS_READ] })).toEqual(bundle);
    expect(bundle.digest).toBe(
      createHash("sha256").update(canonicalJson(bundle.request)).digest("hex"),
    );
    expect(bundle.request).toMatchObject({ maxOutputTokens: 1024, tools: [FS_READ] });
    expect(compile(view, policy).digest).not.toBe(bundle.digest);
    expect(compile(view, { ...policy, maxOutputTokens: 1025 }).digest).not.toBe(bundle.digest);
  });

  it("counts a request with a BPE tokenizer within its estimate", () => {
    const { messages } = history()
      .turn(words(50))
      .calls("reading", "c1")
      .outputs(words(80, "out"), "c1")
      .results("done")
      .turn("and?");
    const bundle = compile(viewOf(messages), { model: BPE_MODEL, budget: 10_000 });
    expect(bundle.omitted).toBe(0);
    expect(estimator.estimate(BPE_MODEL, bundle.request)).toBeLessThanOrEqual(bundle.tokens);
  });
});

describe("compileContext: cost", () => {
  /** `estimator` with its `raw` calls counted (the per-message token counts). */
  function counting(): { tokens: TokenEstimator; calls: () => number } {
    const base = createTokenEstimator({ catalogue });
    let calls = 0;
    return {
      tokens: {
        ...base,
        raw: (model, input) => {
          calls += 1;
          return base.raw(model, input);
        },
      },
      calls: () => calls,
    };
  }

  it("counts only about the window's messages of a 100,000-message history, and then only new ones", () => {
    const builder = new HistoryBuilder();
    const segments = [
      { kind: "turn", words: 12 },
      { kind: "step", words: 20, calls: 1, results: "tool+text", outputWords: 30 },
      { kind: "step", words: 15, calls: 0, results: "text", outputWords: 10 },
      { kind: "step", words: 25, calls: 0, results: "none", outputWords: 0 },
    ] as const;
    for (let i = 0; builder.messages.length < 100_000; i++) builder.add(segments[i % 4]!);
    const messages = builder.messages;
    const view = (): ThreadView => ({
      thread: OWN_THREAD,
      messages,
      newestTurn: newestTurnOf(messages),
      summaries: [summary(1, "What happened before.")],
      pinned: [{ id: "p", kind: "rule", text: "Be brief." }],
    });
    const policy: ContextPolicy = { model: MODEL, budget: 8000, feeds: "branch: main" };
    const { tokens, calls } = counting();

    const first = compileContext(view(), DIRECTIVE, policy, tokens);
    const window = first.messages;
    expect(window).toBeGreaterThan(50);
    expect(first.omitted).toBeGreaterThan(99_000);
    // Each message of the window, the one unit that did not fit, and a few for the fixed parts.
    expect(calls()).toBeLessThanOrEqual(window + 10);

    const fixed = calls();
    compileContext(view(), DIRECTIVE, policy, tokens);
    const perCompile = calls() - fixed;
    expect(perCompile).toBeLessThanOrEqual(6);

    builder.add({ kind: "step", words: 30, calls: 0, results: "none", outputWords: 0 });
    const before = calls();
    const next = compileContext(view(), DIRECTIVE, policy, tokens);
    expect(calls() - before).toBe(perCompile + 1);
    expect(next.messages + next.omitted).toBe(messages.length);

    builder.add({ kind: "turn", words: 5 });
    builder.add({ kind: "step", words: 30, calls: 2, results: "tool+text", outputWords: 40 });
    const again = calls();
    compileContext(view(), DIRECTIVE, policy, tokens);
    expect(calls() - again).toBe(perCompile + 4);
  });
});
