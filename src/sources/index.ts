// Continuous inputs with durable cursors: the adapter contract, the adapters, and their runner.

export { ChangeWaiter } from "./change-waiter.js";
// The line core (splitting, batching) and the file, dataset and command sources.
export { ChunkBatcher, compileFilter, filterKeeps } from "./chunk-batcher.js";
export {
  type CommandCursor,
  type CommandSourceOptions,
  createCommandSource,
  parseCommandCursor,
} from "./command-source.js";
export { compareDatasetPaths, type DatasetFilter, datasetFiles } from "./dataset-files.js";
export {
  createDatasetSource,
  type DatasetCursor,
  type DatasetSourceOptions,
  parseDatasetCursor,
} from "./dataset-source.js";
export {
  createFileSource,
  DEFAULT_FILE_POLL_MS,
  type FileSourceOptions,
} from "./file-source.js";
export { type FileCursor, HEAD_BYTES, parseFileCursor } from "./followed-file.js";
export { createHttpSource, httpSourceOptions } from "./http-source.js";
export { lineShape } from "./line-shapes.js";
export { LineSplitter, type SplitLine } from "./line-splitter.js";
export {
  checkSourceAccess,
  type SourceAccess,
  SourceAccessError,
  type SourceAccessErrorCode,
  type SourceAccessPolicy,
} from "./source-access.js";
export {
  DEFAULT_SOURCE_ADAPTERS,
  type SourceAdapter,
  type SourceAdapters,
} from "./source-adapters.js";
export {
  CHUNK_MEDIA_TYPE,
  compilePatterns,
  countMatches,
  DEFAULT_ARTIFACT_BYTES,
  type PatternMatchers,
  readChunkLines,
} from "./source-chunk.js";
export {
  checkSourceEntry,
  defaultSourceMode,
  PATTERN_NAME,
  SOURCE_SCHEMES,
  type SourceEntry,
  sourceEntryOf,
  sourceEntrySchema,
} from "./source-definition.js";
export {
  type DigestChunk,
  renderSourceDigest,
  type SourceDigestInput,
} from "./source-digest.js";
export {
  BATCH_FIELDS,
  SOURCE_ACTION_FIELDS,
  SOURCE_FIELDS,
  type SourceIssue,
  sourceConfigError,
} from "./source-issues.js";
export {
  NO_SOURCE_ACTIONS,
  parseSourceManifest,
  SOURCE_MANIFEST_KEYS,
  type SourceActionsPolicy,
  type SourceManifest,
} from "./source-manifest.js";
export {
  DEFAULT_RECALL_BYTES,
  DEFAULT_RECALL_LINES,
  type RecalledLines,
  type RecallQuery,
  recallSourceLines,
  SourceRecallError,
  type SourceRecallErrorCode,
} from "./source-recall.js";
export {
  IN_FLIGHT,
  type SourceRunner,
  SourceRunnerError,
  type SourceRunnerErrorCode,
  type SourceRunnerOptions,
  type SourceRunnerOutcome,
  startSourceRunner,
} from "./source-runner.js";
export {
  expandSourceEnv,
  literalSecretIssues,
  openSourceDefinition,
  type SourceOpening,
} from "./source-secrets.js";
export {
  DEFAULT_BATCHING,
  SOURCE_KINDS,
  type Source,
  type SourceBatching,
  type SourceChunkEmission,
  type SourceContext,
  type SourceCursor,
  type SourceDefinition,
  type SourceEmission,
  type SourceExhaustedEmission,
  type SourceFailedEmission,
  type SourceFilter,
  type SourceJson,
  type SourceKind,
  type SourceNoticeEmission,
  type SourceRotatedEmission,
} from "./source-types.js";
export {
  applySourceEvent,
  emptySourcesState,
  readSourcesState,
  SOURCES_STATE_EVENT_TYPES,
  type SourceState,
  type SourcesState,
  sourcesStateProjection,
} from "./sources-state.js";
export { createSseSource, sseSourceOptions } from "./sse-source.js";
export { createWebSocketSource, websocketSourceOptions } from "./websocket-source.js";
