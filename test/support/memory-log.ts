import type { EventStore } from "../../src/log/index.js";
import type { AnyNewEvent } from "../../src/spec/index.js";

const ARTIFACT = { hash: "0".repeat(64), size: 1, media_type: "text/markdown" };

/** Events that make a continuity with an owner, as `spool` writes them. */
export function continuityStart(continuity: string, actor: string): AnyNewEvent[] {
  return [
    {
      continuity,
      type: "continuity.created",
      actor,
      origin: "test",
      data: { title: continuity },
    },
    {
      continuity,
      type: "actor.added",
      actor,
      origin: "test",
      data: { actor_id: actor, kind: "person", access: "owner" },
    },
  ];
}

/** A `summary.completed` of `thread` (a worker stream of it), as a summarizer writes it. */
export function summaryEvent(
  continuity: string,
  thread: string,
  id: string,
  text: string,
  previous?: string,
): AnyNewEvent {
  return {
    continuity,
    stream: { kind: "worker", id: `${thread}@summary1` },
    type: "summary.completed",
    data: {
      id,
      thread,
      summarizer: "thread_summary",
      mode: "handoff",
      covers: { thread, from_seq: 1, to_seq: 2 },
      text,
      tokens: Math.ceil(text.length / 4),
      artifact: ARTIFACT,
      ...(previous !== undefined ? { previous } : {}),
    },
  };
}

/** A user's pin (`context.pinned` on the continuity). */
export function pinEvent(
  continuity: string,
  id: string,
  text: string,
  kind: "rule" | "fact" = "fact",
): AnyNewEvent {
  return { continuity, type: "context.pinned", data: { id, kind, text, by: "user" } };
}

/** A user's unpin. */
export function unpinEvent(continuity: string, id: string): AnyNewEvent {
  return { continuity, type: "context.unpinned", data: { id, by: "user" } };
}

/** A user turn by `actor`. */
export function turnEvent(continuity: string, actor: string, text: string): AnyNewEvent {
  return { continuity, type: "turn.added", actor, origin: "test", data: { text } };
}

/** Appends events in one batch. */
export async function write(store: EventStore, events: readonly AnyNewEvent[]): Promise<void> {
  await store.appendBatch(events);
}
