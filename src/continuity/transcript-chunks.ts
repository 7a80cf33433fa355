import type { ProviderMessage } from "../providers/index.js";
import type { ContextMessage } from "./context-bundle.js";
import { renderTranscript } from "./transcript-content.js";

/** Characters the headings around a summary the transcript builds on take (`transcriptOf`). */
export const TRANSCRIPT_FRAME_CHARS = 120;

/**
 * Where the next summarizer run's messages end: from `start`, the most whole messages whose
 * rendered transcript (`renderTranscript`, separators included) fits in `room` characters, and
 * always at least one (a message longer than `room` alone is shortened by the renderer; a thread's
 * over-long inputs are cut to artifacts before they reach its history, so in practice none is).
 * Returns an index after `start`, `messages.length` when everything fits. Pure.
 *
 * A summary made from consecutive runs (each an update of the one before) has read every message,
 * where one run over a transcript too long for the summarizer's window would have left the oldest
 * out.
 */
export function transcriptChunkEnd(
  messages: readonly ContextMessage[],
  start: number,
  room: number,
): number {
  let used = 0;
  let end = start;
  while (end < messages.length) {
    const text = renderTranscript([messages[end]!.message as ProviderMessage]);
    const length = text === "" ? 0 : text.length + 2;
    if (end > start && used + length > room) break;
    used += length;
    end += 1;
  }
  return end;
}
