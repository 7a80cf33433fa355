import { z } from "zod";
import { defineTool } from "../actions/index.js";
import { estimateTokens, truncateToTokens } from "../feeds/index.js";
import type { MemoryHit, MemoryIndex } from "./memory-index.js";

/** What `memory.search` is built for: the index, and the continuity (and actor) it searches for. */
export interface MemorySearchToolOptions {
  index: MemoryIndex;
  /** The continuity the agent runs in: its own entries are never returned. */
  continuity: string;
  /** Only continuities this actor took part in (absent: the whole workspace). */
  actor?: string;
}

/** The most tokens of one hit's text the tool returns (a long summary is cut, and says so). */
const HIT_TOKENS = 1500;

const parameters = z.strictObject({
  query: z
    .string()
    .min(1)
    .max(4000)
    .describe("What to look for, in plain words: a question, names, an error, a task."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(20)
    .optional()
    .describe("Hits to return (default 5, at most 20)."),
});

/**
 * `memory.search`: full-text (and, when configured, embedding) search over the summaries and
 * pinned facts of the workspace's other continuities. Reads only; idempotent. Each hit gives its
 * kind, continuity, date, rank and text (cut to 1,500 tokens).
 */
export function memorySearchTool(options: MemorySearchToolOptions) {
  return defineTool({
    name: "memory.search",
    description:
      "Searches what was learned in earlier conversations of this workspace (their summaries and pinned facts). Use it when the user refers to something from before, or the task looks like one done earlier.",
    parameters,
    idempotent: true,
    sideEffects: false,
    async execute(input) {
      const found = await options.index.search({
        text: input.query,
        limit: input.limit ?? 5,
        exclude: [options.continuity],
        ...(options.actor !== undefined ? { actor: options.actor } : {}),
      });
      return {
        ranking: found.ranking,
        hits: found.hits.map((hit) =>
          memoryHitView(
            hit,
            estimateTokens(hit.text) > HIT_TOKENS
              ? truncateToTokens(hit.text, HIT_TOKENS).value
              : hit.text,
          ),
        ),
      };
    },
  });
}

/**
 * A hit as a reader of search results gets it (`memory.search`, `search_memory` in
 * `spool mcp serve`): id, kind, continuity, thread, date, rank and `text` (the hit's, or a cut).
 */
export function memoryHitView(hit: MemoryHit, text = hit.text) {
  return {
    id: hit.id,
    kind: hit.kind,
    continuity: hit.continuity,
    ...(hit.thread !== undefined ? { thread: hit.thread } : {}),
    date: hit.ts,
    rank: hit.rank,
    text,
  };
}
