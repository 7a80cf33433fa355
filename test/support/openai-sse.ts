/** Builders of small OpenAI Chat Completions stream bodies, for a loopback server to send. */

/** One `data:` frame of a `chat.completion.chunk`. */
function chunk(choices: unknown[], extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({
    id: "chatcmpl-loopback",
    object: "chat.completion.chunk",
    created: 1_770_000_000,
    model: "loopback",
    choices,
    ...extra,
  })}\n\n`;
}

/**
 * The frames of a text answer streamed as `pieces`, one frame each: the role, the pieces, the
 * finish, the usage (as with `stream_options.include_usage`) and `[DONE]`. Send them with
 * `startReplayServer` (a frame per write, so a test can hold the stream between two pieces).
 */
export function openaiTextFrames(pieces: readonly string[]): string[] {
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    ...pieces.map((content) => chunk([{ index: 0, delta: { content }, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([], {
      usage: {
        prompt_tokens: 12,
        completion_tokens: pieces.length,
        total_tokens: 12 + pieces.length,
      },
    }),
    "data: [DONE]\n\n",
  ];
}
