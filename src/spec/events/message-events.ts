import { z } from "zod";
import { defineEvent, identifier } from "./define-event.js";

const count = z.number().int().nonnegative();

/** Token counts as the provider reported them (cached tokens are included in `input_tokens`). */
export const usageData = z.strictObject({
  input_tokens: count,
  output_tokens: count,
  cache_read_tokens: count,
  cache_write_tokens: count,
  reasoning_tokens: count.optional(),
});

/** A provider failure as logged: never a stack, never a key. */
export const providerErrorData = z.strictObject({
  code: z.string().min(1).max(200),
  message: z.string().max(20_000),
  retryable: z.boolean(),
  status: z.number().int().optional(),
  provider_type: z.string().max(200).optional(),
  retry_after_ms: z.number().nonnegative().optional(),
  request_id: z.string().max(500).optional(),
});

const text = z.string().max(10_000_000);

/** One content block of an assembled model message. */
export const contentBlockData = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text }),
  z.strictObject({
    type: z.literal("reasoning"),
    text,
    signature: z.string().optional(),
    summary: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal("redacted-reasoning"), data: z.string() }),
  z.strictObject({
    type: z.literal("tool-call"),
    id: z.string().min(1).max(500),
    name: z.string().min(1).max(500),
    input: z.unknown().optional(),
    input_text: text,
    input_error: z.string().max(2000).optional(),
    server: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal("refusal"), text }),
  z.strictObject({
    type: z.literal("provider"),
    kind: z.string().min(1).max(200),
    data: z.unknown(),
  }),
]);

/**
 * Why a model stopped, in one vocabulary for every provider (see `StopReason` in
 * src/providers/stream-part.ts for what each means).
 */
export const STOP_REASONS = [
  "end",
  "max-tokens",
  "tool-use",
  "stop-sequence",
  "refusal",
  "content-filter",
  "pause",
  "error",
  "cancelled",
  "other",
] as const;

/** An assembled model message as stored in the log. */
export const messageData = z.strictObject({
  format: z.enum(["anthropic", "openai-chat", "openai-responses", "scripted"]),
  provider: z.string().min(1).max(200),
  model: z.string().max(200),
  response_id: z.string().max(500).nullable(),
  content: z.array(contentBlockData).max(10_000),
  usage: usageData,
  stop_reason: z.enum(STOP_REASONS),
  provider_stop_reason: z.string().max(200).nullable(),
});

/** One model call (step) of a thread: its start, its output and how it ended. */
export const messageEvents = {
  "message.completed": defineEvent({
    description:
      "A model call finished: the assembled message (content blocks, tool calls with parsed input, usage, stop reason, provider response id).",
    criticality: "critical",
    streams: ["step"],
    schema: messageData,
  }),
  "message.partial": defineEvent({
    description:
      "What a failed model call produced before it failed, kept for the record; droppable.",
    criticality: "droppable",
    streams: ["step"],
    schema: messageData.extend({ error: providerErrorData }),
  }),
  "message.failed": defineEvent({
    description:
      "A model call ended with an error; `partial` says whether output had arrived. The caller decides whether to retry the step.",
    criticality: "critical",
    streams: ["step"],
    schema: z.strictObject({ error: providerErrorData, partial: z.boolean() }),
  }),
  "provider.retrying": defineEvent({
    description:
      "A model call failed before its first byte with a retryable error; it is sent again after `delay_ms`.",
    criticality: "critical",
    streams: ["step"],
    schema: z.strictObject({
      attempt: z.number().int().min(1),
      delay_ms: z.number().nonnegative(),
      error: providerErrorData,
    }),
  }),
  "provider.cursor-rotated": defineEvent({
    description:
      "A thread stopped continuing from a provider-side response id (expired, unknown, or a handoff) and rebuilt its context from the log.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      previous_response_id: z.string().max(500).nullable(),
      reason: z.enum(["expired", "unknown", "handoff", "provider-changed"]),
      step: identifier.optional(),
      rebuilt_messages: count,
    }),
  }),
};
