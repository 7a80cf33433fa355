import { createHash } from "node:crypto";
import type { ProviderMessage, ProviderRequest, ToolSpec } from "../providers/provider.js";
import type { TokenEstimator } from "../providers/tokens/index.js";
import { canonicalJson } from "../spec/index.js";
import type { HistoryMessage } from "./thread-history.js";

/** What the recent-window compile needs. */
export interface RecentWindowOptions {
  model: string;
  system: string;
  history: readonly HistoryMessage[];
  /** Input tokens the request may use: the model's window minus the output it reserves. */
  budget: number;
  estimator: TokenEstimator;
  maxOutputTokens?: number;
  /** Tools offered natively (they count toward the input, like the system prompt). */
  tools?: readonly ToolSpec[];
}

/** A compiled request and the record of what went into it (`context.compiled`). */
export interface CompiledWindow {
  request: ProviderRequest;
  decision: {
    strategy: "recent-window";
    messages: number;
    omitted: number;
    tokens: number;
    budget: number;
    digest: string;
  };
}

/**
 * The simple context compile of the agent loop: the system prompt, then the newest messages of
 * the thread that fit in `budget`, starting at a user turn when one fits. Each message's tokens
 * are counted once (cached per message and model) and calibrated with the estimator's current
 * factor, so a step costs O(window), not O(thread). The newest user turn is
 * always included, a tool call is never separated from its results (a `tool` message is dropped
 * with the assistant message before it), and consecutive user messages are merged. Deterministic:
 * the same history gives the same request and digest (replay compares them).
 */
export function compileRecentWindow(options: RecentWindowOptions): CompiledWindow {
  const { history, estimator, model, budget } = options;
  const factor = estimator.factor(model);
  const empty = estimator.raw(model, { messages: [] });
  const cost = (entry: HistoryMessage) => rawTokens(estimator, model, entry, empty);
  const tools = options.tools && options.tools.length > 0 ? [...options.tools] : undefined;
  const systemRaw = estimator.raw(model, {
    system: options.system,
    messages: [],
    ...(tools ? { tools } : {}),
  });
  let raw = systemRaw;
  const newestTurn = findLast(history, (entry) => entry.turn);
  let start = history.length;
  let windowStart = history.length;
  for (let index = history.length - 1; index >= 0; index--) {
    const entry = history[index]!;
    const tokens = cost(entry);
    const mustKeep = newestTurn !== -1 && index >= newestTurn;
    if (Math.ceil((raw + tokens) * factor) > budget && !mustKeep) break;
    raw += tokens;
    start = index;
    if (entry.turn) windowStart = index;
  }
  // Start at a user turn when one is inside the window; else at the first message that is not a
  // tool result (whose call was cut off).
  if (windowStart < history.length && windowStart !== start) start = windowStart;
  while (start < history.length && history[start]!.message.role === "tool") start++;
  let kept = systemRaw;
  for (let index = start; index < history.length; index++) kept += cost(history[index]!);
  const messages = mergeUserMessages(history.slice(start).map((entry) => entry.message));
  const request: ProviderRequest = {
    model,
    system: options.system,
    messages,
    ...(tools ? { tools } : {}),
    ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
  };
  return {
    request,
    decision: {
      strategy: "recent-window",
      messages: messages.length,
      omitted: start,
      tokens: Math.ceil(kept * factor),
      budget,
      digest: createHash("sha256").update(canonicalJson(request)).digest("hex"),
    },
  };
}

/**
 * The raw tokens of one history message, counted once per model: a thread's messages never
 * change, so a step costs lookups for the old ones and counting only for the new.
 */
const RAW_TOKENS = new WeakMap<HistoryMessage, { model: string; raw: number }>();

function rawTokens(
  estimator: TokenEstimator,
  model: string,
  entry: HistoryMessage,
  empty: number,
): number {
  const cached = RAW_TOKENS.get(entry);
  if (cached?.model === model) return cached.raw;
  const raw = estimator.raw(model, { messages: [entry.message] }) - empty;
  RAW_TOKENS.set(entry, { model, raw });
  return raw;
}

function mergeUserMessages(messages: ProviderMessage[]): ProviderMessage[] {
  const merged: ProviderMessage[] = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (
      last?.role === "user" &&
      message.role === "user" &&
      typeof last.content === "string" &&
      typeof message.content === "string"
    ) {
      merged[merged.length - 1] = {
        role: "user",
        content: `${last.content}\n\n${message.content}`,
      };
    } else {
      merged.push(message);
    }
  }
  return merged;
}

function findLast<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let index = items.length - 1; index >= 0; index--) if (test(items[index]!)) return index;
  return -1;
}
