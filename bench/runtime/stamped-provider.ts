import type { Provider, ProviderRequest, StreamOptions } from "../../src/providers/index.js";
import type { StreamPart } from "../../src/providers/stream-part.js";

/** `performance.now()` moments one provider saw, in order, over every call it served. */
export interface ProviderStamps {
  /** When `stream()` was called: one per model call (step). */
  calls: number[];
  /**
   * When a tool call closed in the stream, just before the part was handed on: a native
   * `tool-call-end`, or the text chunk that completes a protocol `</action>`.
   */
  closes: number[];
}

const ACTION_CLOSE = "</action>";

/** Yields `parts` unchanged, stamping each tool call's close just before handing it on. */
async function* stampCloses(
  parts: AsyncIterable<StreamPart>,
  stamps: ProviderStamps,
): AsyncGenerator<StreamPart> {
  // The end of the text before this chunk: too short to hold a whole close tag itself.
  let tail = "";
  for await (const part of parts) {
    if (part.type === "tool-call-end") stamps.closes.push(performance.now());
    else if (part.type === "text") {
      const text = tail + part.text;
      if (text.includes(ACTION_CLOSE)) stamps.closes.push(performance.now());
      tail = text.slice(-(ACTION_CLOSE.length - 1));
    }
    yield part;
  }
}

/**
 * Wraps `inner` so every model call and every tool call's close is stamped into `stamps`.
 * `stream()` stamps on entry (a plain function, not a generator, so the stamp is the call
 * itself, not the first read); the parts pass through unchanged, one at a time, on demand.
 */
export function stampedProvider(inner: Provider, stamps: ProviderStamps): Provider {
  return {
    name: inner.name,
    format: inner.format,
    stream(request: ProviderRequest, options?: StreamOptions): AsyncIterable<StreamPart> {
      stamps.calls.push(performance.now());
      return stampCloses(inner.stream(request, options), stamps);
    },
  };
}
