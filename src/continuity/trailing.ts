import type { ContextMessage } from "./context-bundle.js";
import { unitEnd, unitStart } from "./context-compiler.js";

/** The messages a continuation starts with, after the summary. */
export interface TrailingSelection {
  messages: ContextMessage[];
  /** Tokens they take (as `cost` counts them). */
  tokens: number;
  /**
   * The seq of the oldest message of the contiguous tail: everything before it is what the
   * summary must cover (the newest turn, when carried on its own, is before it too).
   */
  fromSeq: number;
}

/**
 * Fills `ceiling` tokens with the newest whole messages of a thread: a contiguous tail that
 * starts at a user message, with every tool call kept beside its results. The newest user turn
 * is always carried verbatim: when it is older than the tail, it goes first, on its own (the
 * summary covers what lies between). Pure.
 */
export function selectTrailing(
  messages: readonly ContextMessage[],
  newestTurn: number,
  ceiling: number,
  cost: (entry: ContextMessage) => number,
): TrailingSelection {
  let start = messages.length;
  let tokens = 0;
  const turnTokens = newestTurn >= 0 ? cost(messages[newestTurn]!) : 0;
  while (start > 0) {
    const unit = unitStart(messages, start - 1);
    let unitTokens = 0;
    for (let index = unit; index < start; index++) unitTokens += cost(messages[index]!);
    const reserve = newestTurn >= 0 && newestTurn < unit ? turnTokens : 0;
    if (tokens + unitTokens + reserve > ceiling) break;
    tokens += unitTokens;
    start = unit;
  }
  // Start at a user message: drop the oldest units until one does.
  while (start < messages.length && messages[start]!.message.role !== "user") {
    const end = unitEnd(messages, start);
    for (let index = start; index < end; index++) tokens -= cost(messages[index]!);
    start = end;
  }
  const tail = messages.slice(start);
  const fromSeq = tail[0]?.seq ?? (messages.at(-1)?.seq ?? 0) + 1;
  if (newestTurn >= 0 && newestTurn < start) {
    return { messages: [messages[newestTurn]!, ...tail], tokens: tokens + turnTokens, fromSeq };
  }
  return { messages: tail, tokens, fromSeq };
}
