import type { StopReason } from "../stream-part.js";

const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  end_turn: "end",
  max_tokens: "max-tokens",
  model_context_window_exceeded: "max-tokens",
  tool_use: "tool-use",
  stop_sequence: "stop-sequence",
  refusal: "refusal",
  pause_turn: "pause",
};

/**
 * Anthropic's `stop_reason` in Spool's vocabulary: `end_turn` → `end`, `max_tokens` and
 * `model_context_window_exceeded` → `max-tokens`, `tool_use` → `tool-use`, `stop_sequence` →
 * `stop-sequence`, `refusal` → `refusal`, `pause_turn` → `pause`; anything else, or none, →
 * `other` (the caller keeps Anthropic's word as `providerReason`).
 */
export function mapAnthropicStopReason(reason: string | null | undefined): StopReason {
  return (reason != null && Object.hasOwn(STOP_REASONS, reason) && STOP_REASONS[reason]) || "other";
}
