import { createHash } from "node:crypto";
import type {
  ProviderMessage,
  ProviderRequest,
  TokenEstimator,
  UserPart,
} from "../providers/index.js";
import {
  type ContextBundle,
  type ContextMessage,
  type ContextPolicy,
  type DirectiveContext,
  memoryMessage,
  type PinnedItem,
  type SeqRange,
  type SummaryItem,
  summaryMessage,
  type ThreadView,
} from "./context-bundle.js";
import { viewHasImages, withoutImages } from "./image-fallback.js";
import { requestDigest } from "./request-digest.js";

/** A tool offered natively, as a request carries it. */
type ToolSpec = NonNullable<ProviderRequest["tools"]>[number];
/**
 * Compiles the context of a thread's next model call: the system prompt (the directive and the
 * pinned rules and facts), the summary chain of the thread's lineage, context feeds, and the
 * newest raw messages, inside `policy.budget`. Deterministic: the same view, directive and policy
 * give the same request and digest (replay re-compiles and compares).
 *
 * Invariants (each has a test): a user turn is sent verbatim or not at all; a tool call is never
 * separated from its results; the directive and the pinned items are always in the system
 * prompt; the newest user turn is always included (if it cannot fit with the mandatory parts the
 * bundle says `overBudget`). When that mandatory part does not fit and holds images (a
 * screenshot in a small window), it is compiled again with each image left out and said so
 * (`withoutImages`) before anything is reported over budget. Messages are taken newest first and
 * their token counts are cached, so a compile costs O(window), however long the continuity is.
 */
export function compileContext(
  view: ThreadView,
  directive: DirectiveContext,
  policy: ContextPolicy,
  estimator: TokenEstimator,
): ContextBundle {
  const bundle = compileView(view, directive, policy, estimator);
  if (!bundle.overBudget || !viewHasImages(view)) return bundle;
  return compileView(withoutImages(view), directive, policy, estimator);
}

function compileView(
  view: ThreadView,
  directive: DirectiveContext,
  policy: ContextPolicy,
  estimator: TokenEstimator,
): ContextBundle {
  const { model, budget } = policy;
  const factor = estimator.factor(model);
  const empty = estimator.raw(model, { messages: [] });
  const messageRaw = (message: ProviderMessage) =>
    estimator.raw(model, { messages: [message] }) - empty;
  const cost = (entry: ContextMessage) => cachedRaw(entry, model, messageRaw);
  const fits = (raw: number) => Math.ceil(raw * factor) <= budget;

  // The directive's own array: the same from step to step, so what is cached by it (its tokens,
  // its canonical JSON in the digest) is computed once.
  const tools =
    directive.tools && directive.tools.length > 0 ? (directive.tools as ToolSpec[]) : undefined;
  const system = systemPrompt(directive.system, view.pinned);
  const { systemRaw, pinnedRaw } = fixedRaw(
    estimator,
    model,
    directive.system,
    system,
    tools,
    view.pinned.length > 0,
  );
  let raw = systemRaw;

  // The newest user turn and everything after it are mandatory.
  const { messages } = view;
  let start = messages.length;
  const mandatoryFrom = view.newestTurn >= 0 ? view.newestTurn : messages.length;
  let messagesRaw = 0;
  while (start > mandatoryFrom) {
    const unit = unitStart(messages, start - 1);
    for (let index = unit; index < start; index++) messagesRaw += cost(messages[index]!);
    start = unit;
  }
  raw += messagesRaw;

  // The newest summary is mandatory too; older links while they fit in their allowance.
  const chain: SummaryItem[] = [];
  let summariesRaw = 0;
  const summaryRaw = (items: readonly SummaryItem[]) => {
    const message = summaryMessage(items, view.streams);
    return message ? messageRaw(message) : 0;
  };
  if (view.summaries.length > 0) {
    chain.push(view.summaries.at(-1)!);
    summariesRaw = summaryRaw(chain);
    const allowance = summariesRaw + (policy.summaryTokens ?? 0) / factor;
    for (let index = view.summaries.length - 2; index >= 0; index--) {
      const next = [view.summaries[index]!, ...chain];
      const nextRaw = summaryRaw(next);
      if (nextRaw > allowance || !fits(raw + nextRaw)) break;
      chain.unshift(view.summaries[index]!);
      summariesRaw = nextRaw;
    }
    raw += summariesRaw;
  }

  // Memory from other continuities: chosen within its budget when the thread began; sent whole
  // when it still fits, before feeds and older history.
  let memoryRaw = 0;
  let memoryLead: ProviderMessage | undefined;
  const memories = view.memories ?? [];
  if (memories.length > 0) {
    const message = memoryMessage(memories)!;
    const tokens = messageRaw(message);
    if (fits(raw + tokens)) {
      memoryRaw = tokens;
      memoryLead = message;
      raw += tokens;
    }
  }

  // Feeds: the current state of the world, before older history, when they fit whole.
  let feedsRaw = 0;
  let feedsMessage: ProviderMessage | undefined;
  if (policy.feeds && policy.feeds.trim() !== "") {
    const message: ProviderMessage = {
      role: "user",
      content: `## Context feeds\n\n${policy.feeds.trim()}`,
    };
    const tokens = messageRaw(message);
    const allowance = (policy.feedsTokens ?? Math.floor(budget / 4)) / factor;
    if (tokens <= allowance && fits(raw + tokens)) {
      feedsRaw = tokens;
      feedsMessage = message;
      raw += tokens;
    }
  }

  // Older messages, newest first, a whole unit (a call with its results) at a time.
  while (start > 0) {
    const unit = unitStart(messages, start - 1);
    let unitRaw = 0;
    for (let index = unit; index < start; index++) unitRaw += cost(messages[index]!);
    if (!fits(raw + unitRaw)) break;
    raw += unitRaw;
    messagesRaw += unitRaw;
    start = unit;
  }
  // Without a summary message in front, the messages must start with a user message: skip the
  // oldest units until one does (never past the mandatory part, which starts at a user turn).
  if (chain.length === 0 && !feedsMessage && !memoryLead) {
    while (start < mandatoryFrom && messages[start]!.message.role !== "user") {
      const end = unitEnd(messages, start);
      for (let index = start; index < end; index++) {
        const tokens = cost(messages[index]!);
        raw -= tokens;
        messagesRaw -= tokens;
      }
      start = end;
    }
  }

  const included = messages.slice(start);
  const lead = [summaryMessage(chain, view.streams), memoryLead, feedsMessage].filter(
    (message): message is ProviderMessage => message !== undefined,
  );
  const request: ProviderRequest = {
    model,
    system,
    messages: mergeUserMessages([...lead, ...included.map((entry) => entry.message)]),
    ...(tools ? { tools } : {}),
    ...(policy.maxOutputTokens !== undefined ? { maxOutputTokens: policy.maxOutputTokens } : {}),
  };
  const tokens = Math.ceil(raw * factor);
  return {
    request,
    parts: {
      system: Math.ceil((systemRaw - pinnedRaw) * factor),
      pinned: Math.ceil(pinnedRaw * factor),
      summaries: Math.ceil(summariesRaw * factor),
      feeds: Math.ceil(feedsRaw * factor),
      messages: Math.ceil(messagesRaw * factor),
      ...(memories.length > 0 ? { memory: Math.ceil(memoryRaw * factor) } : {}),
    },
    tokens,
    budget,
    messages: included.length,
    omitted: start,
    ranges: seqRanges(included, view.thread),
    summaries: chain.map((summary) => summary.id),
    pinned: view.pinned.map((item) => item.id),
    ...(memories.length > 0 ? { memories: memoryLead ? memories.map((item) => item.id) : [] } : {}),
    ...(feedsMessage
      ? { feeds: createHash("sha256").update(policy.feeds!.trim()).digest("hex") }
      : {}),
    overBudget: tokens > budget,
    digest: requestDigest(request),
  };
}

/**
 * The tokens of one message of a thread as `model` counts them, calibrated: its raw count is
 * cached per message (the compile's own cache), so counting a thread again costs lookups.
 */
export function messageTokens(
  estimator: TokenEstimator,
  model: string,
): (entry: ContextMessage) => number {
  const empty = estimator.raw(model, { messages: [] });
  const count = (message: ProviderMessage) => estimator.raw(model, { messages: [message] }) - empty;
  return (entry) => Math.ceil(cachedRaw(entry, model, count) * estimator.factor(model));
}

/** The tokens of a text sent as one user message, as `model` counts them, calibrated. */
export function textTokens(estimator: TokenEstimator, model: string, text: string): number {
  const raw =
    estimator.raw(model, { messages: [{ role: "user", content: text }] }) -
    estimator.raw(model, { messages: [] });
  return Math.ceil(raw * estimator.factor(model));
}

/** The system prompt with the pinned rules and facts after the directive's own text. */
export function systemPrompt(base: string, pinned: readonly PinnedItem[]): string {
  if (pinned.length === 0) return base;
  const section = (kind: PinnedItem["kind"], title: string) => {
    const items = pinned.filter((item) => item.kind === kind);
    return items.length === 0
      ? ""
      : `\n\n# ${title}\n${items.map((item) => `- ${item.text.replace(/\n/g, "\n  ")}`).join("\n")}`;
  };
  return `${base}${section("rule", "Pinned rules (always follow)")}${section("fact", "Pinned facts (always true here)")}`;
}

/**
 * True when `messages[index]` belongs with the message before it: a `tool` message with the
 * assistant message that made the calls, and a step's results text with its `tool` message
 * (both come from the same `loop.decided`).
 */
function joinsPrevious(messages: readonly ContextMessage[], index: number): boolean {
  const entry = messages[index]!;
  if (entry.message.role === "tool") return true;
  const previous = messages[index - 1];
  return (
    entry.message.role === "user" &&
    !entry.turn &&
    previous !== undefined &&
    previous.message.role === "tool" &&
    previous.seq === entry.seq
  );
}

/**
 * The first index of the unit that ends at `last`: an assistant message with its calls' results
 * (and the results text of the same step) is taken or left as one.
 */
export function unitStart(messages: readonly ContextMessage[], last: number): number {
  let index = last;
  while (index > 0 && joinsPrevious(messages, index)) index--;
  return index;
}

/** One past the last index of the unit that starts at `first`. */
export function unitEnd(messages: readonly ContextMessage[], first: number): number {
  let index = first + 1;
  while (index < messages.length && joinsPrevious(messages, index)) index++;
  return index;
}

/** The seq ranges of the included messages, one per thread they came from. */
function seqRanges(included: readonly ContextMessage[], thread: string): SeqRange[] {
  const ranges: SeqRange[] = [];
  for (const entry of included) {
    const owner = entry.thread ?? thread;
    const last = ranges.at(-1);
    if (last && last.thread === owner) {
      last.from_seq = Math.min(last.from_seq, entry.seq);
      last.to_seq = Math.max(last.to_seq, entry.seq);
    } else {
      ranges.push({ thread: owner, from_seq: entry.seq, to_seq: entry.seq });
    }
  }
  return ranges;
}

/**
 * The raw tokens of one message, counted once per model: a thread's messages never change, so a
 * compile counts only the new ones.
 */
const RAW_TOKENS = new WeakMap<ContextMessage, { model: string; raw: number }>();

function cachedRaw(
  entry: ContextMessage,
  model: string,
  count: (message: ProviderMessage) => number,
): number {
  const cached = RAW_TOKENS.get(entry);
  if (cached?.model === model) return cached.raw;
  const raw = count(entry.message);
  RAW_TOKENS.set(entry, { model, raw });
  return raw;
}

/**
 * Consecutive user messages are sent as one (every provider takes that): texts joined by a blank
 * line, and a message with images (a step's results with a screenshot) as the parts of both.
 */
export function mergeUserMessages(messages: readonly ProviderMessage[]): ProviderMessage[] {
  const merged: ProviderMessage[] = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (last?.role !== "user" || message.role !== "user") {
      merged.push(message);
    } else if (typeof last.content === "string" && typeof message.content === "string") {
      merged[merged.length - 1] = {
        role: "user",
        content: `${last.content}\n\n${message.content}`,
      };
    } else {
      merged[merged.length - 1] = {
        role: "user",
        content: [...userParts(last.content), ...userParts(message.content)],
      };
    }
  }
  return merged;
}

function userParts(content: string | UserPart[]): UserPart[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** The last fixed part counted per estimator: most steps of a run have the same one. */
const FIXED_RAW = new WeakMap<
  TokenEstimator,
  {
    model: string;
    base: string;
    system: string;
    tools: readonly ToolSpec[] | undefined;
    pinned: boolean;
    systemRaw: number;
    pinnedRaw: number;
  }
>();

/**
 * Raw tokens of the system prompt with the tools (`systemRaw`), and of the pinned items in it
 * (`pinnedRaw`): counted once while the model, prompt and tools stay the same.
 */
function fixedRaw(
  estimator: TokenEstimator,
  model: string,
  base: string,
  system: string,
  tools: readonly ToolSpec[] | undefined,
  pinned: boolean,
): { systemRaw: number; pinnedRaw: number } {
  const last = FIXED_RAW.get(estimator);
  if (
    last &&
    last.model === model &&
    last.base === base &&
    last.system === system &&
    last.tools === tools &&
    last.pinned === pinned
  ) {
    return last;
  }
  const withTools = tools ? { tools: tools as ToolSpec[] } : {};
  const systemRaw = estimator.raw(model, { system, messages: [], ...withTools });
  const pinnedRaw = !pinned
    ? 0
    : systemRaw - estimator.raw(model, { system: base, messages: [], ...withTools });
  FIXED_RAW.set(estimator, { model, base, system, tools, pinned, systemRaw, pinnedRaw });
  return { systemRaw, pinnedRaw };
}
