import type { EventData } from "../spec/index.js";

/** Content attributes longer than this are cut, with a marker saying so. */
export const CONTENT_LIMIT = 100_000;

/** `text`, cut to `CONTENT_LIMIT` characters with a marker when longer. */
export function boundedContent(text: string): string {
  if (text.length <= CONTENT_LIMIT) return text;
  return `${text.slice(0, CONTENT_LIMIT)}…[cut: ${text.length - CONTENT_LIMIT} more characters]`;
}

/** A value as JSON text for a content attribute (strings as they are), bounded. */
export function contentJson(value: unknown): string {
  if (typeof value === "string") return boundedContent(value);
  try {
    return boundedContent(JSON.stringify(value) ?? "null");
  } catch {
    return "[not serialisable]";
  }
}

/**
 * One message in the GenAI conventions' `gen_ai.input.messages` / `gen_ai.output.messages` shape
 * (role and parts), as JSON text.
 */
export function textMessages(role: "user" | "assistant", text: string): string {
  return contentJson([{ role, parts: [{ type: "text", content: text }] }]);
}

/** An assembled model message as `gen_ai.output.messages` JSON text (text, reasoning, tool calls). */
export function outputMessages(
  message: EventData<"message.completed">,
  finishReason: string,
): string {
  const parts: Record<string, unknown>[] = [];
  for (const block of message.content) {
    if (block.type === "text") parts.push({ type: "text", content: block.text });
    else if (block.type === "reasoning") parts.push({ type: "reasoning", content: block.text });
    else if (block.type === "refusal") parts.push({ type: "refusal", content: block.text });
    else if (block.type === "tool-call") {
      parts.push({
        type: "tool_call",
        id: block.id,
        name: block.name,
        arguments: block.input ?? block.input_text,
      });
    }
  }
  return contentJson([{ role: "assistant", parts, finish_reason: finishReason }]);
}
