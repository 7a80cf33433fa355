import { createHash } from "node:crypto";
import type { ProviderMessage, ProviderRequest } from "../providers/provider.js";
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
 * the thread that fit in `budget`, starting at a user turn when one fits. The newest user turn is
 * always included, a tool call is never separated from its results (a `tool` message is dropped
 * with the assistant message before it), and consecutive user messages are merged. Deterministic:
 * the same history gives the same request and digest (replay compares them).
 */
export function compileRecentWindow(options: RecentWindowOptions): CompiledWindow {
  const { history, estimator, model, budget } = options;
  const cost = (message: ProviderMessage) => estimator.estimate(model, { messages: [message] });
  let used = estimator.estimate(model, { system: options.system, messages: [] });
  const newestTurn = findLast(history, (entry) => entry.turn);
  let start = history.length;
  let windowStart = history.length;
  for (let index = history.length - 1; index >= 0; index--) {
    const entry = history[index]!;
    const tokens = cost(entry.message);
    const mustKeep = newestTurn !== -1 && index >= newestTurn;
    if (used + tokens > budget && !mustKeep) break;
    used += tokens;
    start = index;
    if (entry.turn) windowStart = index;
  }
  // Start at a user turn when one is inside the window; else at the first message that is not a
  // tool result (whose call was cut off).
  if (windowStart < history.length && windowStart !== start) start = windowStart;
  while (start < history.length && history[start]!.message.role === "tool") start++;
  const messages = mergeUserMessages(history.slice(start).map((entry) => entry.message));
  const request: ProviderRequest = {
    model,
    system: options.system,
    messages,
    ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
  };
  const tokens = estimator.estimate(model, request);
  return {
    request,
    decision: {
      strategy: "recent-window",
      messages: messages.length,
      omitted: start,
      tokens,
      budget,
      digest: createHash("sha256").update(canonicalJson(request)).digest("hex"),
    },
  };
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
