import type { EventData, EventOf } from "../spec/index.js";
import { ATTR } from "./attribute-names.js";
import { textMessages } from "./span-content.js";
import type { SpanAttributes } from "./span-record.js";

/** What the fold keeps of a thread's `thread.started`. */
export interface ThreadInfo {
  directive: string;
  chainRoot: string;
  continuationOf?: string;
  /** A child thread (an `agent` action, a summarizer): who spawned it. */
  parent?: { thread: string; step: string; action: string };
}

/** The GenAI usage attributes of a usage record (cache and reasoning tokens when reported). */
export function usageAttributes(usage: EventData<"run.completed">["usage"]): SpanAttributes {
  return {
    [ATTR.inputTokens]: usage.input_tokens,
    [ATTR.outputTokens]: usage.output_tokens,
    [ATTR.cacheReadTokens]: usage.cache_read_tokens,
    [ATTR.cacheCreationTokens]: usage.cache_write_tokens,
    ...(usage.reasoning_tokens !== undefined
      ? { [ATTR.reasoningTokens]: usage.reasoning_tokens }
      : {}),
  };
}

/**
 * A run's input as `gen_ai.input.messages`: its turn's text (taken out of `turnTexts`, which
 * holds the turns not yet run) or a child thread's task; `undefined` when neither is known.
 */
export function runInputMessages(
  event: EventOf<"run.started">,
  turnTexts: Map<string, string>,
): string | undefined {
  const turn = event.data.turn;
  const text = event.data.input ?? (turn !== undefined ? turnTexts.get(turn) : undefined);
  if (turn !== undefined) turnTexts.delete(turn);
  return text === undefined ? undefined : textMessages("user", text);
}

/** A run's final response as `gen_ai.output.messages`, when it had one. */
export function runOutputAttributes(result: string | undefined): SpanAttributes {
  return result === undefined ? {} : { [ATTR.outputMessages]: textMessages("assistant", result) };
}
