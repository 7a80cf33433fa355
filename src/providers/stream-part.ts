import { STOP_REASONS } from "../spec/index.js";
import type { ProviderErrorInfo } from "./provider-error.js";

export { STOP_REASONS };

/** The wire formats Spool decodes; OpenAI-compatible servers speak `openai-chat`. */
export const PROVIDER_FORMATS = [
  "anthropic",
  "openai-chat",
  "openai-responses",
  "scripted",
] as const;
export type ProviderFormat = (typeof PROVIDER_FORMATS)[number];

/**
 * Why a model stopped, in one vocabulary for every provider. The provider's own word is kept
 * beside it (`providerReason`).
 * - `end`: the model finished its turn (`end_turn`, `stop`, `completed`).
 * - `max-tokens`: the output limit cut it (`max_tokens`, `length`, `incomplete: max_output_tokens`).
 * - `tool-use`: it wants tool results (`tool_use`, `tool_calls`, `function_call`).
 * - `stop-sequence`: a stop sequence matched.
 * - `refusal`: it refused (Anthropic `refusal`, an OpenAI refusal).
 * - `content-filter`: the provider's filter stopped it.
 * - `pause`: a long server-tool turn paused (`pause_turn`); continue by sending it back.
 * - `error`: the stream failed; the message holds what arrived before.
 * - `cancelled`: the caller aborted.
 * - `other`: anything else (the provider's word is in `providerReason`).
 */
export type StopReason = (typeof STOP_REASONS)[number];

/**
 * Token counts as the provider reported them. `inputTokens` counts every input token, cached or
 * not (Anthropic reports cached ones apart; adapters add them in); `cacheReadTokens` and
 * `cacheWriteTokens` say how many of those were read from or written to the prompt cache.
 * `reasoningTokens` is the part of `outputTokens` spent on reasoning, when the provider says.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens?: number;
}

/**
 * One piece of a model's streamed output, in the order the provider sent it.
 *
 * `block` numbers the content blocks of the message in order of first appearance, from 0; every
 * part that adds to a block carries its number. The assembler (`assembleMessage`) turns the parts of
 * one stream into one `AssembledMessage`; sinks see the same parts as they arrive.
 *
 * Contract of a provider stream: `retry` parts (attempts that failed before any output) come
 * first; then `start` and the content; the last part is exactly one `stop` or `error`, and nothing
 * follows it. A call that never started ends with `error` and has no `start`. `raw` parts appear
 * only when the caller asked for them, each just before the parts decoded from it.
 */
export type StreamPart =
  | {
      type: "start";
      /** The provider's id of this response (`msg_…`, `chatcmpl-…`, `resp_…`), when it sends one. */
      responseId: string | null;
      model: string;
      /** Usage known at the start (Anthropic sends input tokens first). */
      usage?: Partial<Usage>;
    }
  | { type: "text"; block: number; text: string }
  | {
      type: "reasoning";
      block: number;
      text: string;
      /** True for OpenAI reasoning summaries: a summary, not the reasoning itself. */
      summary?: boolean;
    }
  | {
      /** Anthropic thinking signature (or OpenAI encrypted reasoning): send it back unchanged. */
      type: "reasoning-signature";
      block: number;
      signature: string;
    }
  | {
      /** A reasoning block the provider will not show (Anthropic `redacted_thinking`). */
      type: "redacted-reasoning";
      block: number;
      data: string;
    }
  | {
      type: "tool-call-start";
      block: number;
      /** The provider's call id (`toolu_…`, `call_…`). */
      id: string;
      name: string;
      /** Run by the provider (Anthropic server tools, web search); Spool does not execute it. */
      server?: boolean;
    }
  | { type: "tool-call-delta"; block: number; id: string; inputText: string }
  | {
      type: "tool-call-end";
      block: number;
      id: string;
      /** The whole input as JSON text, as it streamed. */
      inputText: string;
      /** `inputText` parsed; `{}` when it was empty; absent when it did not parse. */
      input?: unknown;
      /** Why `inputText` did not parse, when it did not. */
      inputError?: string;
    }
  | { type: "refusal"; block: number; text: string }
  | {
      /**
       * A content block Spool keeps but does not interpret (server tool results, citations,
       * compaction blocks, containers): the provider's JSON, whole.
       */
      type: "provider-block";
      block: number;
      kind: string;
      data: unknown;
    }
  | {
      /** Usage so far; later parts replace earlier values field by field. */
      type: "usage";
      usage: Partial<Usage>;
    }
  | {
      type: "stop";
      reason: StopReason;
      /** The provider's own stop word (`end_turn`, `tool_calls`, …), or null. */
      providerReason: string | null;
    }
  | {
      /** The stream failed; what came before is kept. Always the last part. */
      type: "error";
      error: ProviderErrorInfo;
    }
  | {
      /** An attempt failed before any output; another follows after `delayMs`. */
      type: "retry";
      attempt: number;
      delayMs: number;
      error: ProviderErrorInfo;
    }
  | {
      /** The provider's event as decoded by its SDK, for debugging (`raw: true`). */
      type: "raw";
      event: unknown;
    };

/** The `type` of a stream part. */
export type StreamPartType = StreamPart["type"];

/** The stream part of type `T`. */
export type StreamPartOf<T extends StreamPartType> = Extract<StreamPart, { type: T }>;
