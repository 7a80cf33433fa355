import { estimateTokens, truncateToTokens } from "../feeds/index.js";
import type { EventData } from "../spec/index.js";
import type { MemoryHit, MemoryIndex } from "./memory-index.js";

/** `memory.recalled` data: the choice a recall made, as the log records it. */
export type RecallData = EventData<"memory.recalled">;

/** What a thread asks its memory for. */
export interface RecallRequest {
  /** The continuity asking: its own entries are never recalled. */
  continuity: string;
  thread: string;
  /** `start`: a fresh thread (the query is its first user turn); `handoff`: a continuation (its summary). */
  trigger: "start" | "handoff";
  query: string;
  /** The actor the thread works for (the turn's), for the `actor` scope. */
  actor?: string;
}

/**
 * Chooses memory for a thread. The runtime logs what `recall` returns as `memory.recalled`
 * before any context carries it; replay answers from that event instead (`recordedRecaller`).
 * `undefined`: nothing to give (no hit, a zero budget, an empty query).
 */
export interface MemoryRecaller {
  recall(request: RecallRequest): Promise<RecallData | undefined>;
}

/** How much memory a thread gets, and from where. */
export interface RecallPolicy {
  /** Tokens the recalled entries may take together (0 disables recall). */
  tokens: number;
  /** `actor` (default): only continuities the thread's actor took part in; `workspace`: all of the store's. */
  scope?: "actor" | "workspace";
  /** Hits considered, best first (default 5). */
  limit?: number;
}

/** The least tokens worth giving an entry cut to fit what is left of the budget. */
const MIN_CUT_TOKENS = 64;
/** The most characters of the query the event keeps. */
const QUERY_MAX = 2000;

/**
 * A recaller over `index`: searches with the request's query within the policy's scope (never the
 * asking continuity), and takes hits best first while they fit in `tokens` (estimated as the
 * feeds estimate them); one that does not fit is cut to what is left when that is at least 64
 * tokens, and the choice ends there. The hits record their whole text's sha256.
 */
export function createMemoryRecaller(index: MemoryIndex, policy: RecallPolicy): MemoryRecaller {
  const scope = policy.scope ?? "actor";
  return {
    async recall(request) {
      if (policy.tokens <= 0 || request.query.trim() === "") return undefined;
      const actor = scope === "actor" ? request.actor : undefined;
      if (scope === "actor" && actor === undefined) return undefined;
      const found = await index.search({
        text: request.query,
        limit: policy.limit ?? 5,
        exclude: [request.continuity],
        ...(actor !== undefined ? { actor } : {}),
      });
      const hits = pickWithin(found.hits, policy.tokens);
      if (hits.length === 0) return undefined;
      return {
        trigger: request.trigger,
        query: request.query.slice(0, QUERY_MAX),
        ranking: found.ranking,
        scope,
        ...(actor !== undefined ? { actor } : {}),
        budget: policy.tokens,
        tokens: hits.reduce((sum, hit) => sum + hit.tokens, 0),
        hits,
        ...(found.degraded ? { degraded: found.degraded.slice(0, 2000) } : {}),
      };
    },
  };
}

/** Hits best first while they fit in `budget` tokens (see `createMemoryRecaller`). */
export function pickWithin(hits: readonly MemoryHit[], budget: number): RecallData["hits"] {
  const chosen: RecallData["hits"] = [];
  let left = budget;
  for (const hit of hits) {
    const base = {
      id: hit.id,
      continuity: hit.continuity,
      ...(hit.thread !== undefined ? { thread: hit.thread } : {}),
      kind: hit.kind,
      ref: hit.ref,
      ts: hit.ts,
      sha256: hit.hash,
    };
    const tokens = estimateTokens(hit.text);
    if (tokens <= left) {
      chosen.push({ ...base, text: hit.text, tokens });
      left -= tokens;
      continue;
    }
    if (left >= MIN_CUT_TOKENS) {
      const cut = truncateToTokens(hit.text, left);
      chosen.push({ ...base, text: cut.value, tokens: cut.tokens, cut: true });
    }
    break;
  }
  return chosen;
}

/**
 * Replay's recaller: the choices the log recorded (`memory.recalled`), by thread and trigger, in
 * the order they were made; it searches nothing, so a replay gives each thread what the original
 * gave it, however the index changed since.
 */
export function recordedRecaller(
  events: Iterable<{ type: string; stream: { id: string }; data: unknown }>,
): MemoryRecaller {
  const recorded = new Map<string, RecallData[]>();
  for (const event of events) {
    if (event.type !== "memory.recalled") continue;
    const data = event.data as RecallData;
    const key = `${event.stream.id}\u0000${data.trigger}`;
    recorded.set(key, [...(recorded.get(key) ?? []), data]);
  }
  return {
    async recall(request) {
      const key = `${request.thread}\u0000${request.trigger}`;
      const queue = recorded.get(key);
      return queue?.shift();
    },
  };
}
