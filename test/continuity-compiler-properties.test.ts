/**
 * `compileContext` over random thread histories (fast-check): every invariant of a compile,
 * recomputed from its input, for any history, budget, pins, summary chain, feeds and tokenizer.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ContextBundle,
  type ContextMessage,
  type ContextPolicy,
  compileContext,
  type DirectiveContext,
  summaryMessage,
  type ThreadView,
  unitStart,
} from "../src/continuity/index.js";
import type { ProviderMessage } from "../src/providers/index.js";
import type { TokenEstimator } from "../src/providers/tokens/index.js";
import { canonicalJson } from "../src/spec/index.js";
import {
  BPE_MODEL,
  calibrated,
  callIds,
  compile,
  FS_READ,
  MODEL,
  textOf,
} from "./support/context-compiles.js";
import { cloneView, tagged, viewArbitrary } from "./support/context-histories.js";

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
