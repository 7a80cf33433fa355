import { createHash } from "node:crypto";
import type { EventData, SpoolEvent } from "../spec/index.js";

/** What an entry of the memory index holds: a summary of a thread, or a pinned fact. */
export type MemoryKind = "summary" | "fact";

/**
 * One entry of the memory index. Derived from one event of the log (`id` is that event's id), so
 * the whole index can be rebuilt from the log at any time.
 */
export interface MemoryEntry {
  /** The id of the event that wrote it (`summary.completed`, `context.pinned`): unique in the store. */
  id: string;
  continuity: string;
  /** The thread a summary summarizes; absent for a pinned fact. */
  thread?: string;
  kind: MemoryKind;
  /** The summary's or the pin's own id, unique within its continuity and kind. */
  ref: string;
  text: string;
  /** When it was written, and where in the log. */
  ts: string;
  seq: number;
  /** sha256 (hex) of `text`. */
  hash: string;
}

/** One change to the index that one event of the log makes. */
export type IndexOperation =
  | { op: "put"; entry: MemoryEntry }
  /** A pin was removed, or a summary was brought up to date by a newer one. */
  | { op: "remove"; continuity: string; kind: MemoryKind; ref: string }
  /** An actor took part in a continuity (added to it, added a turn, or pinned a fact). */
  | { op: "actor"; continuity: string; actor: string };

/** The event types the index is derived from. */
export const MEMORY_SOURCE_TYPES = [
  "summary.completed",
  "context.pinned",
  "context.unpinned",
  "actor.added",
  "turn.added",
] as const;

/** sha256 (hex) of a text, as entries and `memory.recalled` record it. */
export function textHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The index operations of one event, in order: pure, so catching up, reindexing and tests all
 * derive the same index from the same log. A summary that brings an older one up to date
 * (`previous`) replaces it, since it covers what the older one did; pinned rules stay with their
 * continuity (they are instructions for it, not knowledge), pinned facts are indexed; a fact
 * pinned again under its id replaces the older text; an unpin removes it.
 */
export function indexOperations(event: SpoolEvent): IndexOperation[] {
  const { continuity } = event;
  switch (event.type) {
    case "summary.completed": {
      const data = event.data as EventData<"summary.completed">;
      const put: IndexOperation = {
        op: "put",
        entry: {
          id: event.id,
          continuity,
          thread: data.thread,
          kind: "summary",
          ref: data.id,
          text: data.text,
          ts: event.ts,
          seq: event.seq,
          hash: textHash(data.text),
        },
      };
      return data.previous !== undefined && data.previous !== data.id
        ? [{ op: "remove", continuity, kind: "summary", ref: data.previous }, put]
        : [put];
    }
    case "context.pinned": {
      const data = event.data as EventData<"context.pinned">;
      if (data.kind !== "fact") return [];
      return [
        { op: "remove", continuity, kind: "fact", ref: data.id },
        {
          op: "put",
          entry: {
            id: event.id,
            continuity,
            kind: "fact",
            ref: data.id,
            text: data.text,
            ts: event.ts,
            seq: event.seq,
            hash: textHash(data.text),
          },
        },
        // Whoever pinned a fact by hand took part in the continuity (its memory is theirs too).
        ...(event.actor && data.by === "user"
          ? [{ op: "actor" as const, continuity, actor: event.actor }]
          : []),
      ];
    }
    case "context.unpinned": {
      const data = event.data as EventData<"context.unpinned">;
      return [{ op: "remove", continuity, kind: "fact", ref: data.id }];
    }
    case "actor.added": {
      const data = event.data as EventData<"actor.added">;
      return [{ op: "actor", continuity, actor: data.actor_id }];
    }
    case "turn.added":
      return event.actor ? [{ op: "actor", continuity, actor: event.actor }] : [];
    default:
      return [];
  }
}
