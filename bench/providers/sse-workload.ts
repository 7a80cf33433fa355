/** Synthetic provider streams of many small deltas, framed exactly as the providers frame them. */

const WORDS =
  "the agent keeps reading its log while the model streams every token into sinks and the store".split(
    " ",
  );

/** Delta `i` of a stream: a word with its leading space, sometimes a newline or a non-ASCII one. */
function piece(i: number): string {
  const word = WORDS[(i * 7) % WORDS.length]!;
  if (i % 97 === 96) return " café\n";
  if (i % 31 === 30) return `${word}.`;
  return ` ${word}`;
}

/** An Anthropic Messages SSE body with `deltas` text deltas (pings every 1,000). */
export function anthropicBody(deltas: number): Buffer {
  const frame = (type: string, data: unknown) =>
    `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const out: string[] = [
    frame("message_start", {
      type: "message_start",
      message: {
        id: "msg_bench_01",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-6",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 1200,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
          output_tokens: 1,
        },
      },
    }),
    frame("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
  ];
  for (let i = 0; i < deltas; i++) {
    out.push(
      frame("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: piece(i) },
      }),
    );
    if (i % 1000 === 999) out.push(frame("ping", { type: "ping" }));
  }
  out.push(
    frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    frame("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: deltas },
    }),
    frame("message_stop", { type: "message_stop" }),
  );
  return Buffer.from(out.join(""), "utf8");
}

/** An OpenAI Chat Completions SSE body with `deltas` content deltas, a usage chunk and `[DONE]`. */
export function openaiChatBody(deltas: number): Buffer {
  const base = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_760_000_000,
    model: "gpt-4o",
  };
  const chunk = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
  const out: string[] = [
    chunk({
      ...base,
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
    }),
  ];
  for (let i = 0; i < deltas; i++) {
    out.push(
      chunk({
        ...base,
        choices: [{ index: 0, delta: { content: piece(i) }, finish_reason: null }],
      }),
    );
  }
  out.push(
    chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    chunk({
      ...base,
      choices: [],
      usage: { prompt_tokens: 1200, completion_tokens: deltas, total_tokens: 1200 + deltas },
    }),
    "data: [DONE]\n\n",
  );
  return Buffer.from(out.join(""), "utf8");
}

/** The text a body's deltas add up to. */
export function expectedText(deltas: number): string {
  let text = "";
  for (let i = 0; i < deltas; i++) text += piece(i);
  return text;
}
