import { z } from "zod";
import { defineInternalSource, type InternalFeedSource } from "../feeds/index.js";
import { MemoryError, storageError } from "./memory-error.js";
import type { MemoryIndex } from "./memory-index.js";
import { pickWithin } from "./memory-recall.js";

/** The name agents declare the feed by: `source: { type: internal, action: memory }`. */
export const MEMORY_FEED_SOURCE = "memory";

/** The conversation a `memory` feed searches for: its newest user turn, and who wrote it. */
export interface MemoryFeedConversation {
  text: string;
  actor?: string;
}

/** Options of `memoryFeedSource`. */
export interface MemoryFeedOptions {
  /** The store's memory index; none: every read fails with `memory.unavailable`. */
  index: MemoryIndex | undefined;
  /** The continuity whose context the feed is in: its own entries are never offered. */
  continuity: string;
  /** The conversation now (the newest user turn), or `undefined` before the first one. */
  conversation(): MemoryFeedConversation | undefined;
  /**
   * Told of every read that failed because of the index (`memory.storage`, `memory.unavailable`),
   * and awaited before the read rejects, so the session can warn its user; the feed then records
   * `feed.failed`.
   */
  failed?(error: MemoryError): void | Promise<void>;
}

/** Parameters of the `memory` feed source. */
export interface MemoryFeedParams {
  /** Hits considered, best first, 1 to 20 (default 5). */
  limit: number;
  /** Tokens the entries may take together (default 1,000). */
  tokens: number;
  /** `actor` (default): only continuities the turn's actor took part in; `workspace`: all. */
  scope: "actor" | "workspace";
}

const paramsSchema = z.strictObject({
  limit: z
    .number({ error: "must be a whole number of hits from 1 to 20" })
    .int("must be a whole number of hits from 1 to 20")
    .min(1, "must be at least 1")
    .max(20, "must be at most 20")
    .default(5),
  tokens: z
    .number({ error: "must be a positive whole number of tokens" })
    .int("must be a positive whole number of tokens")
    .positive("must be a positive whole number of tokens")
    .default(1000),
  scope: z
    .enum(["actor", "workspace"], { error: 'must be "actor" or "workspace"' })
    .default("actor"),
});

/** The most characters of the query the value repeats. */
const QUERY_SHOWN = 200;

/**
 * The `memory` context feed source: at each read, the entries of the memory index (summaries and
 * pinned facts of the store's other continuities) that best match the conversation's newest user
 * turn, best first while they fit in `tokens` (as `memory.recalled` picks them), as text with
 * each entry's kind, continuity, date and id.
 *
 * Contract: the value is the decision: the feed engine logs it (`feed.refreshed`) and each step's
 * context records it (`context.feeds`), so replay reads it from the log and never searches the
 * index again. A read with no conversation yet, or no hit, gives a one-line value saying so. A
 * failing index rejects the read with a `MemoryError` (after telling `failed`): the feed records
 * `feed.failed` and the step runs on without memory.
 */
export function memoryFeedSource(options: MemoryFeedOptions): InternalFeedSource<MemoryFeedParams> {
  return defineInternalSource({
    name: MEMORY_FEED_SOURCE,
    description:
      "Entries of the memory index (other conversations' summaries and pinned facts) that match the newest user turn, within a token budget.",
    parameters: paramsSchema as z.ZodType<MemoryFeedParams>,
    async read(params) {
      const turn = options.conversation();
      const query = turn?.text.trim() ?? "";
      if (query === "") return "No user turn yet: nothing to search memory for.";
      const actor = params.scope === "actor" ? turn?.actor : undefined;
      if (params.scope === "actor" && actor === undefined)
        return "The newest turn has no actor: memory is searched only for a known actor.";
      const found = await search(options, {
        text: query,
        limit: params.limit,
        exclude: [options.continuity],
        ...(actor !== undefined ? { actor } : {}),
      });
      const hits = pickWithin(found, params.tokens);
      const shown = query.length > QUERY_SHOWN ? `${query.slice(0, QUERY_SHOWN)}…` : query;
      if (hits.length === 0) return `Nothing in other conversations matches "${shown}".`;
      return [
        `From other conversations, for "${shown}":`,
        ...hits.map(
          (hit, index) =>
            `[${index + 1}] ${hit.kind} · continuity ${hit.continuity} · ${hit.ts.slice(0, 10)} · ${hit.id}${hit.cut ? " (cut)" : ""}\n${hit.text}`,
        ),
      ].join("\n\n");
    },
  });
}

/** The hits of `query`, or the failure told to `options.failed` and thrown as a `MemoryError`. */
async function search(
  options: MemoryFeedOptions,
  query: Parameters<MemoryIndex["search"]>[0],
): Promise<Awaited<ReturnType<MemoryIndex["search"]>>["hits"]> {
  let failure: MemoryError;
  if (options.index === undefined) {
    failure = new MemoryError(
      "memory.unavailable",
      "this session has no memory index, so the memory feed has nothing to search",
      {
        hint: "Memory is off when SPOOL_MEMORY_TOKENS=0 or the store's index cannot be located; unset it, or remove the memory feed from the agent",
      },
    );
  } else {
    try {
      return (await options.index.search(query)).hits;
    } catch (error) {
      failure = storageError(error, "searching for the memory feed");
    }
  }
  // The warning must not take the failure's place: a warning that cannot be given is dropped.
  await Promise.resolve(options.failed?.(failure)).catch(() => undefined);
  throw failure;
}
