import { z } from "zod";
import { defineEvent, identifier } from "./define-event.js";

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** One entry of the memory index a thread was given (`memory.recalled`'s `hits`). */
export const recalledHit = z.strictObject({
  /** The memory entry: the id of the event that wrote it (a `summary.completed`, a `context.pinned`). */
  id: identifier,
  /** Where it was written: the continuity, and the thread for a summary. */
  continuity: identifier,
  thread: identifier.optional(),
  kind: z.enum(["summary", "fact"]),
  /** The summary's or the pin's own id. */
  ref: identifier,
  /** When it was written. */
  ts: z.string().min(1).max(40),
  /** sha256 of the entry's whole text as indexed: the text it came from, checkable against the log. */
  sha256,
  /** The text the context carries: the whole entry, or its start when `cut`. */
  text: z.string().min(1).max(200_000),
  tokens: z.number().int().nonnegative(),
  cut: z.boolean().optional(),
});

/** Shared memory across continuities: what a thread was given from other conversations. */
export const memoryEvents = {
  "memory.recalled": defineEvent({
    description:
      "Entries of the memory index (summaries and pinned facts of other continuities) chosen for a thread at its start or its handoff, logged before any context carries them; replay reads them from here instead of searching again.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      /** `start`: a fresh thread, the query its first user turn; `handoff`: a continuation, the query its summary. */
      trigger: z.enum(["start", "handoff"]),
      /** The query as searched (cut to its first 2,000 characters). */
      query: z.string().max(2000),
      /** `fts`: full-text ranking alone; `hybrid`: full text and embeddings, fused. */
      ranking: z.enum(["fts", "hybrid"]),
      /** `actor`: only continuities the actor took part in; `workspace`: every continuity of the store. */
      scope: z.enum(["actor", "workspace"]),
      actor: identifier.optional(),
      /** Tokens the hits could take, and took. */
      budget: z.number().int().positive(),
      tokens: z.number().int().nonnegative(),
      hits: z.array(recalledHit).min(1).max(100),
      /** Why the ranking fell back to full text alone (the embedding API failed), when it did. */
      degraded: z.string().max(2000).optional(),
    }),
  }),
  "memory.failed": defineEvent({
    description:
      "The memory index could not be opened or searched when a thread asked for memory; the thread went on without it. Logged once per session (the first failure), with the error's code and how to fix it.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      /** What asked: a thread's recall at its `start` or `handoff`, or its `memory` context feed. */
      trigger: z.enum(["start", "handoff", "feed"]),
      error: z.strictObject({
        /** A `memory.*` code (`memory.storage`: the index could not be opened or read). */
        code: z.string().min(1).max(200),
        message: z.string().max(20_000),
        /** What to do about it, e.g. `spool memory reindex`. */
        hint: z.string().max(2000).optional(),
      }),
    }),
  }),
};
