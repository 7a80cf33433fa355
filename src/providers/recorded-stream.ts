import { createAnthropicProvider } from "./anthropic/index.js";
import { createOpenAIChatProvider, createOpenAIResponsesProvider } from "./openai/index.js";
import type { Provider } from "./provider.js";
import type { StreamPart } from "./stream-part.js";

/** The wire formats a recorded stream can be decoded from. */
export const RECORDED_FORMATS = ["anthropic", "openai-chat", "openai-responses"] as const;
export type RecordedFormat = (typeof RECORDED_FORMATS)[number];

/** Options of `decodeRecordedStream`. */
export interface RecordedStreamOptions {
  /** OpenAI-compatible flavour for `openai-chat` (where reasoning text arrives, …). */
  flavour?: string;
  /** Emit `raw` parts too. */
  raw?: boolean;
  /** The body arrives in pieces of this many bytes (default: whole), to exercise the SDK's framing. */
  chunkBytes?: number;
}

/**
 * Decodes a recorded provider response body (the SSE bytes exactly as a server sent them) through
 * the real SDK, by handing the SDK a `fetch` that answers with those bytes. What a user checks a
 * recording with (`spool providers decode`), and what tests compare across chunkings.
 */
export function decodeRecordedStream(
  body: Uint8Array,
  format: RecordedFormat,
  options: RecordedStreamOptions = {},
): AsyncIterable<StreamPart> {
  const provider = recordedProvider(body, format, options);
  return provider.stream(
    { model: "recorded", messages: [{ role: "user", content: "(recorded)" }] },
    { raw: options.raw === true },
  );
}

function recordedProvider(
  body: Uint8Array,
  format: RecordedFormat,
  options: RecordedStreamOptions,
): Provider {
  const fetch = replayFetch(body, options.chunkBytes);
  const common = {
    apiKey: "recorded-stream",
    baseURL: "http://recorded.invalid/v1",
    fetch,
    transport: { maxAttempts: 1, idleTimeoutMs: 0 },
  };
  switch (format) {
    case "anthropic":
      return createAnthropicProvider(common);
    case "openai-chat":
      return createOpenAIChatProvider({
        ...common,
        ...(options.flavour ? { flavour: options.flavour as never } : {}),
      });
    case "openai-responses":
      return createOpenAIResponsesProvider(common);
  }
}

/** A `fetch` that answers every request with `body` as a server-sent-event stream. */
function replayFetch(body: Uint8Array, chunkBytes?: number): typeof globalThis.fetch {
  return async () => {
    const size = chunkBytes && chunkBytes > 0 ? chunkBytes : body.length || 1;
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= body.length) return controller.close();
        controller.enqueue(body.slice(offset, offset + size));
        offset += size;
      },
    });
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream" },
    });
  };
}
