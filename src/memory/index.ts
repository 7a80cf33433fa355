/**
 * The memory module: the summaries and pinned facts of every continuity of a store, indexed for
 * search (FTS5 bm25 on SQLite, `ts_rank_cd` on PostgreSQL, fused with embeddings when configured)
 * and kept in step with the log it is derived from. `openMemoryIndex` opens it beside a store;
 * `createMemoryRecaller` chooses memory for a thread within a token budget (the runtime logs the
 * choice as `memory.recalled`); `recordedRecaller` serves those choices back to a replay;
 * `memorySearchTool` is the model's `memory.search`; `memoryFeedSource` is the `memory` context
 * feed (the newest user turn's hits, within a token budget).
 */

export {
  createOpenAiEmbedder,
  type Embedder,
  embedderFromEnv,
  type OpenAiEmbedderOptions,
} from "./embedder.js";
export type { MemoryBackend, MemoryScope, ScoredEntry } from "./memory-backend.js";
export {
  type IndexOperation,
  indexOperations,
  MEMORY_SOURCE_TYPES,
  type MemoryEntry,
  type MemoryKind,
  textHash,
} from "./memory-entry.js";
export {
  MemoryError,
  type MemoryErrorCode,
  REINDEX_HINT,
  storageError,
} from "./memory-error.js";
export {
  MEMORY_FEED_SOURCE,
  type MemoryFeedConversation,
  type MemoryFeedOptions,
  type MemoryFeedParams,
  memoryFeedSource,
} from "./memory-feed.js";
export {
  createMemoryIndex,
  fuse,
  lazyMemoryIndex,
  type MemoryHit,
  type MemoryIndex,
  type MemoryIndexOptions,
  type MemorySearch,
  type MemorySearchResult,
  RRF_K,
} from "./memory-index.js";
export { fts5Match, MAX_QUERY_TERMS, queryTerms, websearchText } from "./memory-query.js";
export {
  createMemoryRecaller,
  type MemoryRecaller,
  pickWithin,
  type RecallData,
  type RecallPolicy,
  type RecallRequest,
  recordedRecaller,
} from "./memory-recall.js";
export {
  type MemorySearchToolOptions,
  memoryHitView,
  memorySearchTool,
} from "./memory-tool.js";
export { type OpenMemoryOptions, openMemoryIndex } from "./open-memory.js";
export { openPostgresMemory, type PostgresMemoryOptions } from "./postgres-memory.js";
export { openSqliteMemory, sqliteMemoryFile } from "./sqlite-memory.js";
