import type { HookEventName } from "./hook-definition.js";

/** A payload's other fields: every event may carry more than its listed ones. */
interface Open {
  readonly [field: string]: unknown;
}

/** `error`: an action or model call failed. */
export interface ErrorHookPayload extends Open {
  error: { code: string; message: string; transient: boolean; [field: string]: unknown };
  thread: string;
  step: number;
  /** Which attempt of the step failed. */
  attempt: number;
}

/** `limit`: a directive's limit was reached. */
export interface LimitHookPayload extends Open {
  /** The limit's name (`max_turns`, `max_tokens`, `max_spend`, …). */
  limit: string;
  value: number;
  max: number;
  thread: string;
}

/** `context_window_pressure`: how full the model's context window is, after a step. */
export interface ContextPressureHookPayload extends Open {
  tokens_used: number;
  max_tokens: number;
  /** tokens_used / max_tokens. */
  pressure_ratio: number;
  /** True when tokens_used is an estimate (no usage reported by the provider). */
  estimated: boolean;
  thread: string;
  directive: string;
  /** The summarizer directive chosen for this thread's directive. */
  summarizer: string;
}

/** `after_step`: a step of the thread's loop ended. */
export interface AfterStepHookPayload extends Open {
  thread: string;
  step: number;
  decision: unknown;
  usage: unknown;
}

/** `after_complete`: the thread's loop ended. */
export interface AfterCompleteHookPayload extends Open {
  thread: string;
  status: string;
  result?: unknown;
}

/** `directive_return`: a child thread's directive returned to its parent. */
export interface DirectiveReturnHookPayload extends Open {
  thread: string;
  directive: string;
  parent: string;
  status: string;
  result?: unknown;
}

/** `thread.*`: a thread's lifecycle event, with that event's data as further fields. */
export interface ThreadHookPayload extends Open {
  thread: string;
  directive: string;
}

/**
 * `stream_chunk_received`: a delivery turn brought a source's chunks `from_chunk`..`to_chunk` to
 * the agent (fired once per source the turn delivers, when its run starts).
 */
export interface StreamChunkHookPayload extends Open {
  source_id: string;
  /** The source's kind (`file`, `command`, `http`, `sse`, `websocket`, `dataset`). */
  kind: string;
  /** Its path, command line or URL. */
  target: string;
  from_chunk: number;
  to_chunk: number;
  /** How many chunks the delivery holds (`to_chunk - from_chunk + 1`). */
  chunks: number;
  /** Lines kept, summed over the chunks. */
  lines: number;
  /** Input bytes read, skipped lines included. */
  bytes: number;
  /** Lines the source's filter left out. */
  skipped: number;
  /** Lines matching each of the source's named patterns (`matches.error`), summed. */
  matches: Record<string, number>;
  /** Where the source stands after the last chunk delivered. */
  cursor: Record<string, unknown>;
}

/** `stream_source_exhausted`: a delivery told the agent a source's input has ended for good. */
export interface StreamExhaustedHookPayload extends Open {
  source_id: string;
  kind: string;
  target: string;
  /** Chunks the source read in all. */
  chunks: number;
  /** Where it ended. */
  cursor: Record<string, unknown>;
}

/** The payload of each hook event; docs/hooks.md describes the fields. */
export interface HookPayloads {
  error: ErrorHookPayload;
  limit: LimitHookPayload;
  context_window_pressure: ContextPressureHookPayload;
  after_step: AfterStepHookPayload;
  after_complete: AfterCompleteHookPayload;
  directive_return: DirectiveReturnHookPayload;
  "thread.started": ThreadHookPayload;
  "thread.completed": ThreadHookPayload;
  "thread.suspended": ThreadHookPayload;
  "thread.cancelled": ThreadHookPayload;
  "thread.continued": ThreadHookPayload;
  stream_chunk_received: StreamChunkHookPayload;
  stream_source_exhausted: StreamExhaustedHookPayload;
}

/** The payload of `event`. */
export type HookPayload<E extends HookEventName = HookEventName> = HookPayloads[E];
