/** Builders of small Anthropic Messages SSE bodies for transport tests. */

/** One SSE frame: `event: <type>` and one `data:` line. */
export function frame(type: string, data: unknown, newline = "\n"): string {
  return `event: ${type}${newline}data: ${JSON.stringify(data)}${newline}${newline}`;
}

/** The frames of a whole text response streamed as `pieces`. */
export function anthropicTextFrames(
  pieces: string[],
  options: { id?: string; stop?: string } = {},
): string[] {
  const id = options.id ?? "msg_transport_test";
  return [
    frame("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 12,
          output_tokens: 1,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        },
      },
    }),
    frame("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    ...pieces.map((text) =>
      frame("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      }),
    ),
    frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    frame("message_delta", {
      type: "message_delta",
      delta: { stop_reason: options.stop ?? "end_turn", stop_sequence: null },
      usage: { output_tokens: pieces.length },
    }),
    frame("message_stop", { type: "message_stop" }),
  ];
}

/** The mid-stream error Anthropic sends when it is overloaded. */
export const OVERLOADED_FRAME = frame("error", {
  type: "error",
  error: { type: "overloaded_error", message: "Overloaded" },
});
