import { fromBlockData, toBlockData } from "../providers/index.js";
import type { EventData } from "../spec/index.js";
import type { ContextMessage, SummaryItem } from "./context-bundle.js";

/** A message of a continuation's seed, as `handoff.seeded` stores it. */
export type SeedMessageData = EventData<"handoff.seeded">["trailing"][number];
/** A summary of the chain, as `handoff.seeded` stores it. */
export type SummaryLinkData = EventData<"handoff.seeded">["summaries"][number];

/** A thread's message in the seed's stored form (snake_case, with the seq it came from). */
export function messageToSeed(entry: ContextMessage): SeedMessageData {
  const { message, seq } = entry;
  switch (message.role) {
    case "user":
      return {
        role: "user",
        content:
          typeof message.content === "string"
            ? message.content
            : message.content.map((part) =>
                part.type === "text"
                  ? { type: "text" as const, text: part.text }
                  : { type: "image" as const, media_type: part.mediaType, data: part.data },
              ),
        seq,
        turn: entry.turn,
      };
    case "assistant":
      return {
        role: "assistant",
        content:
          typeof message.content === "string" ? message.content : message.content.map(toBlockData),
        seq,
      };
    case "tool":
      return {
        role: "tool",
        results: message.results.map((result) => ({
          tool_call_id: result.toolCallId,
          ...(result.name !== undefined ? { name: result.name } : {}),
          output: result.output,
          ...(result.isError !== undefined ? { is_error: result.isError } : {}),
        })),
        seq,
      };
  }
}

/** A seed message back as a context message of the thread it was carried from. */
export function seedToMessage(data: SeedMessageData, from: string): ContextMessage {
  const base = { seq: data.seq, thread: from };
  switch (data.role) {
    case "user":
      return {
        ...base,
        turn: data.turn,
        message: {
          role: "user",
          content:
            typeof data.content === "string"
              ? data.content
              : data.content.map((part) =>
                  part.type === "text"
                    ? { type: "text" as const, text: part.text }
                    : { type: "image" as const, mediaType: part.media_type, data: part.data },
                ),
        },
      };
    case "assistant":
      return {
        ...base,
        turn: false,
        message: {
          role: "assistant",
          content:
            typeof data.content === "string" ? data.content : data.content.map(fromBlockData),
        },
      };
    case "tool":
      return {
        ...base,
        turn: false,
        message: {
          role: "tool",
          results: data.results.map((result) => ({
            toolCallId: result.tool_call_id,
            ...(result.name !== undefined ? { name: result.name } : {}),
            output: result.output,
            ...(result.is_error !== undefined ? { isError: result.is_error } : {}),
          })),
        },
      };
  }
}

/** A stored summary link as the compiler's summary item. */
export function summaryFromData(data: SummaryLinkData): SummaryItem {
  return {
    id: data.id,
    summarizer: data.summarizer,
    text: data.text,
    tokens: data.tokens,
    covers: data.covers,
  };
}
