import type { EventStore } from "../log/index.js";
import type { Embedder } from "./embedder.js";
import type { MemoryBackend, MemoryScope, ScoredEntry } from "./memory-backend.js";
import {
  type IndexOperation,
  indexOperations,
  MEMORY_SOURCE_TYPES,
  type MemoryEntry,
} from "./memory-entry.js";
import { MemoryError, storageError } from "./memory-error.js";
import { queryTerms } from "./memory-query.js";

/** A search of the memory index. */
export interface MemorySearch {
  /** Any text: a question, a user turn, a summary. Its terms are taken by `queryTerms`. */
  text: string;
  /** Hits to return, 1 to 100 (default 5). */
  limit?: number;
  /** Only continuities this actor took part in. */
  actor?: string;
  /** Never these continuities (the one asking). */
  exclude?: readonly string[];
}

/** One entry a search found: its rank (1 is best) and score in the ranking used. */
export interface MemoryHit extends MemoryEntry {
  rank: number;
  score: number;
}

/** What a search found, and how it ranked. */
export interface MemorySearchResult {
  hits: MemoryHit[];
  /** `hybrid` when embeddings were fused in, `fts` for full text alone. */
  ranking: "fts" | "hybrid";
  /** The terms searched for. */
  terms: string[];
  /** Why an embedder that is configured was not used for this search. */
  degraded?: string;
}

/**
 * The shared memory of a store: every summary and pinned fact of every continuity, searchable.
 *
 * Contract: derived from the log alone. Each search first catches up (applies the log's new
 * `summary.completed`, `context.pinned`/`unpinned`, `actor.added` and `turn.added` from the
 * position stored with the index), so it sees everything committed before it began; `reindex`
 * drops the index and rebuilds it from the whole log. A query never raises a syntax error; a
 * failing embedding API makes a search fall back to full text (saying so in `degraded`), never
 * fail.
 */
export interface MemoryIndex {
  readonly kind: "sqlite" | "postgres";
  /** The embedding model when embeddings are configured. */
  readonly embeddingModel: string | undefined;
  /** Applies what the log has beyond the stored position; resolves with the events read. */
  catchUp(): Promise<number>;
  search(query: MemorySearch): Promise<MemorySearchResult>;
  /** Drops the index and rebuilds it from the log. */
  reindex(): Promise<{ entries: number; position: number }>;
  /** Entries held, and the log position reached. */
  stats(): Promise<{ entries: number; position: number }>;
  close(): Promise<void>;
}

/** Options of `createMemoryIndex`. */
export interface MemoryIndexOptions {
  store: EventStore;
  backend: MemoryBackend;
  /** Embeddings fused with full text (reciprocal rank fusion); none: full text alone. */
  embedder?: Embedder;
  /** Events applied per transaction while catching up (default 2,000). */
  batchEvents?: number;
}

/** The constant of reciprocal rank fusion: a hit's share is 1 / (RRF_K + rank). */
export const RRF_K = 60;
/** A catch-up that reads this many events compacts the backend after it (`MemoryBackend.compact`). */
const COMPACT_AFTER_EVENTS = 10_000;
/** Entries embedded per call of the embedding API. */
const EMBED_BATCH = 64;

/** Builds the memory index over `backend`, kept in step with `store`'s log (see `MemoryIndex`). */
export function createMemoryIndex(options: MemoryIndexOptions): MemoryIndex {
  const { store, backend, embedder } = options;
  const batchEvents = options.batchEvents ?? 2000;
  let chain: Promise<unknown> = Promise.resolve();
  let closed = false;
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  };
  const check = () => {
    if (closed) throw new MemoryError("memory.closed", "the memory index is closed");
  };

  const catchUpNow = async (): Promise<number> => {
    const position = await backend.position();
    const head = await store.head();
    if (head <= position) return 0;
    let read = 0;
    let batch: { seq: number; operation: IndexOperation }[] = [];
    let events = 0;
    for await (const event of store.read({
      types: MEMORY_SOURCE_TYPES,
      after: position,
      until: head,
    })) {
      read += 1;
      events += 1;
      for (const operation of indexOperations(event)) batch.push({ seq: event.seq, operation });
      if (events >= batchEvents) {
        await backend.apply(batch, event.seq);
        batch = [];
        events = 0;
      }
    }
    await backend.apply(batch, head);
    if (read >= COMPACT_AFTER_EVENTS) await backend.compact?.();
    return read;
  };

  /** Embeds entries that have no vector of the model yet; the error when the API fails. */
  const embedPending = async (): Promise<string | undefined> => {
    if (!embedder) return undefined;
    for (;;) {
      const pending = await backend.unembedded(embedder.model, EMBED_BATCH);
      if (pending.length === 0) return undefined;
      try {
        const vectors = await embedder.embed(pending.map((entry) => entry.text));
        await backend.storeVectors(
          embedder.model,
          pending.map((entry, index) => ({ id: entry.id, vector: vectors[index]! })),
        );
      } catch (error) {
        if (error instanceof MemoryError && error.code === "memory.embedding-failed")
          return error.message;
        throw error;
      }
    }
  };

  const searchNow = async (query: MemorySearch): Promise<MemorySearchResult> => {
    check();
    const limit = query.limit ?? 5;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new MemoryError(
        "memory.bad-option",
        `limit must be a whole number from 1 to 100, not ${limit}`,
        {
          hint: "Ask for at most 100 hits",
        },
      );
    }
    const pendingError = await serial(async () => {
      await catchUpNow();
      return embedPending();
    });
    const terms = queryTerms(query.text);
    const scope: MemoryScope = {
      ...(query.actor !== undefined ? { actor: query.actor } : {}),
      ...(query.exclude ? { exclude: query.exclude } : {}),
    };
    if (!embedder) {
      const found = await backend.search(terms, scope, limit);
      return { hits: ranked(found), ranking: "fts", terms };
    }
    const pool = Math.max(limit * 4, 20);
    const textual = await backend.search(terms, scope, pool);
    let semantic: ScoredEntry[];
    try {
      const [vector] = await embedder.embed([query.text.trim() === "" ? " " : query.text]);
      semantic = await backend.nearest(embedder.model, vector!, scope, pool);
    } catch (error) {
      if (!(error instanceof MemoryError && error.code === "memory.embedding-failed")) throw error;
      return {
        hits: ranked(textual.slice(0, limit)),
        ranking: "fts",
        terms,
        degraded: error.message,
      };
    }
    return {
      hits: fuse([textual, semantic], limit),
      ranking: "hybrid",
      terms,
      ...(pendingError ? { degraded: `some entries have no vector yet: ${pendingError}` } : {}),
    };
  };

  return {
    kind: backend.kind,
    embeddingModel: embedder?.model,
    catchUp: () => {
      check();
      return serial(catchUpNow).catch((error: unknown) => {
        throw storageError(error, "catching up with the log");
      });
    },
    async search(query) {
      try {
        return await searchNow(query);
      } catch (error) {
        throw storageError(error, "searching");
      }
    },
    reindex() {
      check();
      return serial(async () => {
        await backend.clear();
        await catchUpNow();
        await embedPending();
        return { entries: await backend.count(), position: await backend.position() };
      });
    },
    async stats() {
      check();
      return { entries: await backend.count(), position: await backend.position() };
    },
    async close() {
      if (closed) return;
      closed = true;
      await chain;
      await backend.close();
    },
  };
}

function ranked(found: readonly ScoredEntry[]): MemoryHit[] {
  return found.map(({ entry, score }, index) => ({ ...entry, rank: index + 1, score }));
}

/**
 * Reciprocal rank fusion of several rankings: each entry scores the sum of 1 / (RRF_K + rank)
 * over the rankings it is in; ties go to the newer entry.
 */
export function fuse(rankings: readonly (readonly ScoredEntry[])[], limit: number): MemoryHit[] {
  const scores = new Map<string, { entry: MemoryEntry; score: number }>();
  for (const ranking of rankings) {
    ranking.forEach(({ entry }, index) => {
      const known = scores.get(entry.id);
      const share = 1 / (RRF_K + index + 1);
      if (known) known.score += share;
      else scores.set(entry.id, { entry, score: share });
    });
  }
  return [...scores.values()]
    .sort((a, b) => b.score - a.score || b.entry.seq - a.entry.seq)
    .slice(0, limit)
    .map(({ entry, score }, index) => ({ ...entry, rank: index + 1, score }));
}

/**
 * A `MemoryIndex` opened on first use by `open` (which catches up with the log), so that a caller
 * that may never search pays nothing; a failed open is tried again on the next use. `close`
 * closes it only when it was opened.
 */
export function lazyMemoryIndex(
  kind: MemoryIndex["kind"],
  open: () => Promise<MemoryIndex>,
): MemoryIndex {
  let opened: Promise<MemoryIndex> | undefined;
  const index = () => {
    opened ??= open().catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };
  return {
    kind,
    embeddingModel: undefined,
    catchUp: async () => (await index()).catchUp(),
    search: async (query) => (await index()).search(query),
    reindex: async () => (await index()).reindex(),
    stats: async () => (await index()).stats(),
    async close() {
      const current = opened;
      opened = undefined;
      if (current !== undefined) await (await current.catch(() => undefined))?.close();
    },
  };
}
