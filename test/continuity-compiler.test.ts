import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ContextBundle,
  type ContextMessage,
  type ContextPolicy,
  compileContext,
  type DirectiveContext,
  HANDOFF_HEADING,
  type PinnedItem,
  type SummaryItem,
  summaryMessage,
  type ThreadView,
  unitStart,
} from "../src/continuity/index.js";
import type { ProviderMessage, ToolSpec } from "../src/providers/index.js";
import { createModelCatalogue } from "../src/providers/models/index.js";
import { createTokenEstimator, type TokenEstimator } from "../src/providers/tokens/index.js";
import { canonicalJson } from "../src/spec/index.js";
import {
  cloneView,
  FROM_THREAD,
  HistoryBuilder,
  newestTurnOf,
  OWN_THREAD,
  tagged,
  viewArbitrary,
} from "./support/context-histories.js";

/** A model without a tokenizer (characters ÷ 3.5): the estimate of a request is additive. */
const MODEL = "claude-sonnet-4-5";
/** A model with a real BPE tokenizer (o200k_base). */
const BPE_MODEL = "gpt-4o";
const catalogue = createModelCatalogue();
const estimator = createTokenEstimator({ catalogue });

const DIRECTIVE: DirectiveContext = { name: "chat", system: "You help with the user's files." };
const FS_READ: ToolSpec = {
  name: "fs_read",
  description: "Reads a file.",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
};

/** An estimator whose calibration factor for `MODEL` is `factor`. */
function calibrated(factor: number, model = MODEL): TokenEstimator {
  return createTokenEstimator({ catalogue, calibration: { [model]: { factor, observations: 6 } } });
}

function compile(
  view: ThreadView,
  policy: Omit<ContextPolicy, "model"> & { model?: string },
  directive: DirectiveContext = DIRECTIVE,
  tokens: TokenEstimator = estimator,
): ContextBundle {
  return compileContext(view, directive, { model: MODEL, ...policy }, tokens);
}

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

const textOf = (message: ProviderMessage | undefined): string =>
  message && message.role !== "tool" && typeof message.content === "string" ? message.content : "";

const callIds = (message: ProviderMessage | undefined): string[] =>
  message?.role === "assistant" && typeof message.content !== "string"
    ? message.content.flatMap((block) => (block.type === "tool-call" ? [block.id] : []))
    : [];

function summary(index: number, text: string): SummaryItem {
  return {
    id: `${FROM_THREAD}@summary${index}`,
    summarizer: "thread_summary",
    text,
    tokens: Math.ceil(text.length / 3.5),
    covers: { thread: FROM_THREAD, from_seq: index * 10, to_seq: index * 10 + 9 },
  };
}

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

/** One random compile: a view, a directive, a policy and a calibration factor. */
interface Case {
  view: ThreadView;
  directive: DirectiveContext;
  policy: ContextPolicy;
  factor: number;
}

const caseArbitrary = (model: string, maxSegments: number): fc.Arbitrary<Case> =>
  fc
    .record({
      view: viewArbitrary(maxSegments),
      systemWords: fc.integer({ min: 1, max: 200 }),
      tools: fc.boolean(),
      budget: fc.oneof(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 500, max: 5000 }),
        fc.integer({ min: 5000, max: 60_000 }),
      ),
      summaryTokens: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }),
      feeds: fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }),
      feedsTokens: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }),
      factor: fc.oneof(fc.constant(1), fc.double({ min: 0.5, max: 2, noNaN: true })),
    })
    .map(
      (shape): Case => ({
        view: shape.view,
        directive: {
          name: "chat",
          system: tagged("system:", shape.systemWords),
          ...(shape.tools ? { tools: [FS_READ] } : {}),
        },
        policy: {
          model,
          budget: shape.budget,
          ...(shape.summaryTokens !== undefined ? { summaryTokens: shape.summaryTokens } : {}),
          ...(shape.feeds !== undefined ? { feeds: tagged("feeds:", shape.feeds) } : {}),
          ...(shape.feedsTokens !== undefined ? { feedsTokens: shape.feedsTokens } : {}),
        },
        factor: shape.factor,
      }),
    );

/** Consecutive user messages of text as one, as a provider is sent them. */
function merged(messages: readonly ProviderMessage[]): ProviderMessage[] {
  const out: ProviderMessage[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (last?.role === "user" && message.role === "user") {
      out[out.length - 1] = { role: "user", content: `${textOf(last)}\n\n${textOf(message)}` };
    } else {
      out.push(message);
    }
  }
  return out;
}

/** Checks every invariant of `compileContext` on one compile, recomputing what it can. */
function checkInvariants(c: Case, tokens: TokenEstimator, bundle: ContextBundle): void {
  const { view, directive, policy } = c;
  const { model, budget } = policy;
  const { request } = bundle;
  const f = tokens.factor(model);
  const empty = tokens.raw(model, { messages: [] });
  const rawOf = (messages: readonly ProviderMessage[]) =>
    messages.reduce((sum, message) => sum + tokens.raw(model, { messages: [message] }) - empty, 0);
  const included = view.messages.slice(bundle.omitted);
  const tools = directive.tools ? [...directive.tools] : undefined;
  const systemRaw = tokens.raw(model, {
    system: request.system,
    messages: [],
    ...(tools ? { tools } : {}),
  });
  const mandatoryFrom = view.newestTurn >= 0 ? view.newestTurn : view.messages.length;
  const mandatoryRaw = rawOf(view.messages.slice(mandatoryFrom).map((entry) => entry.message));
  const chain = view.summaries.slice(view.summaries.length - bundle.summaries.length);
  const chainMessage = summaryMessage(chain);
  const chainRaw = chainMessage ? rawOf([chainMessage]) : 0;
  const feedsText = policy.feeds?.trim() ?? "";
  const feedsMessage: ProviderMessage = {
    role: "user",
    content: `## Context feeds\n\n${feedsText}`,
  };
  const lead = [...(chainMessage ? [chainMessage] : []), ...(bundle.feeds ? [feedsMessage] : [])];

  // The request is the lead, then the included messages (the newest whole ones), merged.
  expect(bundle.messages).toBe(included.length);
  expect(request.messages).toEqual(merged([...lead, ...included.map((entry) => entry.message)]));
  expect(request.tools).toEqual(tools);

  // A user turn is sent verbatim or not at all.
  const userTexts = request.messages.map(textOf);
  view.messages.forEach((entry, index) => {
    if (!entry.turn) return;
    const text = textOf(entry.message);
    const tag = text.split(" ")[0]!;
    const whole = userTexts.some((sent) => sent.includes(text));
    expect(whole).toBe(index >= bundle.omitted);
    if (!whole) expect(userTexts.some((sent) => sent.includes(tag))).toBe(false);
  });

  // A tool message follows the assistant message that made its calls; an included call has its
  // results right after it when the history has them.
  const position = new Map(view.messages.map((entry, index) => [entry.message, index]));
  request.messages.forEach((message, index) => {
    if (message.role === "tool") {
      const calls = callIds(request.messages[index - 1]);
      expect(request.messages[index - 1]?.role).toBe("assistant");
      for (const result of message.results) expect(calls).toContain(result.toolCallId);
    }
    if (message.role === "assistant" && callIds(message).length > 0) {
      const next = view.messages[position.get(message)! + 1];
      if (next?.message.role === "tool") expect(request.messages[index + 1]).toBe(next.message);
    }
  });

  // The directive and every pinned item are in the system prompt, each kind in its section.
  const system = request.system ?? "";
  expect(system.startsWith(directive.system)).toBe(true);
  const rules = system.indexOf("# Pinned rules");
  const facts = system.indexOf("# Pinned facts");
  for (const item of view.pinned) {
    for (const line of item.text.split("\n")) {
      const at = system.indexOf(line);
      expect(at).toBeGreaterThan(directive.system.length);
      if (item.kind === "rule") {
        expect(at).toBeGreaterThan(rules);
        if (facts >= 0) expect(at).toBeLessThan(facts);
      } else {
        expect(at).toBeGreaterThan(facts);
      }
    }
  }
  expect(bundle.pinned).toEqual(view.pinned.map((item) => item.id));

  // The newest user turn is always in; the first message is a user message.
  if (view.newestTurn >= 0) expect(bundle.omitted).toBeLessThanOrEqual(view.newestTurn);
  expect(request.messages.length).toBeGreaterThan(0);
  expect(request.messages[0]!.role).toBe("user");

  // Tokens: exactly the estimate of what was put in (before merging), which bounds the estimate
  // of the request as sent; over budget exactly when the mandatory parts do not fit, and then
  // nothing optional is added.
  const includedRaw = rawOf(included.map((entry) => entry.message));
  const totalRaw = systemRaw + rawOf(lead) + includedRaw;
  expect(bundle.tokens).toBe(Math.ceil(totalRaw * f));
  expect(tokens.estimate(model, request)).toBeLessThanOrEqual(bundle.tokens);
  expect(bundle.overBudget).toBe(bundle.tokens > budget);
  const newest = view.summaries.at(-1);
  const newestRaw = newest ? rawOf([summaryMessage([newest])!]) : 0;
  const mandatory = systemRaw + mandatoryRaw + newestRaw;
  expect(bundle.overBudget).toBe(Math.ceil(mandatory * f) > budget);
  if (bundle.overBudget) {
    expect(bundle.omitted).toBe(mandatoryFrom);
    expect(bundle.summaries.length).toBeLessThanOrEqual(1);
    expect(bundle.feeds).toBeUndefined();
  }
  expect(bundle.parts.messages).toBe(Math.ceil(includedRaw * f));
  expect(bundle.parts.summaries).toBe(Math.ceil(chainRaw * f));

  // The newest summary is always there; older links (newest first) only within summaryTokens
  // and the budget, and the next older one would not have fitted.
  if (newest) {
    expect(bundle.summaries.at(-1)).toBe(newest.id);
    expect(bundle.summaries).toEqual(chain.map((item) => item.id));
    const allowance = newestRaw + (policy.summaryTokens ?? 0) / f;
    expect(chainRaw).toBeLessThanOrEqual(allowance);
    const older = view.summaries[view.summaries.length - chain.length - 1];
    if (older) {
      const nextRaw = rawOf([summaryMessage([older, ...chain])!]);
      const fitted = Math.ceil((systemRaw + mandatoryRaw + nextRaw) * f) <= budget;
      expect(nextRaw > allowance || !fitted).toBe(true);
    }
    for (const item of chain) expect(userTexts[0]).toContain(item.text);
  } else {
    expect(bundle.summaries).toEqual([]);
  }

  // Feeds are included exactly when they fit their allowance and the budget after the summaries.
  if (feedsText !== "") {
    const feedsRaw = rawOf([feedsMessage]);
    const allowance = (policy.feedsTokens ?? Math.floor(budget / 4)) / f;
    const fitted = Math.ceil((systemRaw + mandatoryRaw + chainRaw + feedsRaw) * f) <= budget;
    expect(bundle.feeds !== undefined).toBe(feedsRaw <= allowance && fitted);
    if (bundle.feeds) {
      expect(bundle.feeds).toBe(createHash("sha256").update(feedsText).digest("hex"));
      expect(userTexts.some((text) => text.includes(feedsText))).toBe(true);
    }
  } else {
    expect(bundle.feeds).toBeUndefined();
  }

  // Older messages are taken while they fit: the next older whole unit (back to a user message
  // when nothing leads the messages) would not have fitted.
  if (bundle.omitted > 0 && !bundle.overBudget) {
    let from = bundle.omitted - 1;
    if (lead.length > 0) {
      from = unitStart(view.messages, from);
    } else {
      while (
        from >= 0 &&
        (view.messages[from]!.message.role !== "user" || unitStart(view.messages, from) !== from)
      ) {
        from--;
      }
    }
    if (from >= 0) {
      const more = rawOf(view.messages.slice(from, bundle.omitted).map((entry) => entry.message));
      expect(Math.ceil((totalRaw + more) * f)).toBeGreaterThan(budget);
    }
  }

  // Ranges name the included messages' seqs, per thread.
  const owner = (entry: ContextMessage) => entry.thread ?? view.thread;
  for (const entry of included) {
    expect(
      bundle.ranges.some(
        (range) =>
          range.thread === owner(entry) && range.from_seq <= entry.seq && entry.seq <= range.to_seq,
      ),
    ).toBe(true);
  }
  for (const range of bundle.ranges) {
    const seqs = included.filter((entry) => owner(entry) === range.thread).map((e) => e.seq);
    expect(seqs).toContain(range.from_seq);
    expect(seqs).toContain(range.to_seq);
  }
  // The thread's own messages are a contiguous tail: no omitted one lies past its range's start
  // (see the known defect below for one that shares the start's seq).
  const own = bundle.ranges.find((range) => range.thread === view.thread);
  for (const entry of view.messages.slice(0, bundle.omitted)) {
    if (own && owner(entry) === view.thread) expect(entry.seq).toBeLessThanOrEqual(own.from_seq);
  }

  // The digest is the request's.
  expect(bundle.digest).toBe(createHash("sha256").update(canonicalJson(request)).digest("hex"));
}

describe("compileContext: properties over random thread histories", () => {
  it("holds every invariant for any history, budget, pins, summary chain and feeds", () => {
    fc.assert(
      fc.property(caseArbitrary(MODEL, 40), (c) => {
        const tokens = calibrated(c.factor);
        checkInvariants(c, tokens, compileContext(c.view, c.directive, c.policy, tokens));
      }),
      { numRuns: 300 },
    );
  });

  it("holds them with a BPE tokenizer too", () => {
    fc.assert(
      fc.property(caseArbitrary(BPE_MODEL, 15), (c) => {
        const tokens = calibrated(c.factor, BPE_MODEL);
        checkInvariants(c, tokens, compileContext(c.view, c.directive, c.policy, tokens));
      }),
      { numRuns: 40 },
    );
  });

  it("is deterministic: the same input gives the same bundle, cached counts or not", () => {
    fc.assert(
      fc.property(caseArbitrary(MODEL, 30), (c) => {
        const tokens = calibrated(c.factor);
        const first = compileContext(c.view, c.directive, c.policy, tokens);
        const again = compileContext(c.view, c.directive, c.policy, tokens);
        const fresh = compileContext(
          cloneView(c.view),
          structuredClone(c.directive),
          c.policy,
          tokens,
        );
        expect(again).toEqual(first);
        expect(fresh).toEqual(first);
        expect(fresh.digest).toBe(first.digest);
      }),
      { numRuns: 100 },
    );
  });

  it("sends the whole history when the budget has room for it", () => {
    fc.assert(
      fc.property(viewArbitrary(30), (view) => {
        const bundle = compile(view, { budget: 10_000_000, summaryTokens: 10_000_000 });
        expect(bundle.omitted).toBe(0);
        expect(bundle.summaries).toEqual(view.summaries.map((item) => item.id));
        expect(bundle.overBudget).toBe(false);
      }),
      { numRuns: 100 },
    );
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
