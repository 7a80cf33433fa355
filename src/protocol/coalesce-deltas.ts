import type { ProtocolEvent } from "./protocol-event.js";

/**
 * Merges adjacent `block-delta`s of the same block into one; every other event is kept as is,
 * in order. Two chunkings of the same output give equal results after this (the parser's
 * split-invariance guarantee is stated in these terms). Returns a new array; the input events
 * are not modified.
 */
export function coalesceDeltas(events: Iterable<ProtocolEvent>): ProtocolEvent[] {
  const merged: ProtocolEvent[] = [];
  let pending: Extract<ProtocolEvent, { type: "block-delta" }> | undefined;
  let parts: string[] = [];
  const flush = () => {
    if (pending) merged.push(parts.length === 1 ? pending : { ...pending, text: parts.join("") });
    pending = undefined;
    parts = [];
  };
  for (const event of events) {
    if (event.type === "block-delta") {
      if (pending && pending.block === event.block) {
        parts.push(event.text);
        continue;
      }
      flush();
      pending = event;
      parts = [event.text];
      continue;
    }
    flush();
    merged.push(event);
  }
  flush();
  return merged;
}
