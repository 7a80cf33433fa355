// Continuous inputs with durable cursors: the adapter contract, the adapters, and their runner.

export { lineShape } from "./line-shapes.js";
export {
  checkSourceAccess,
  type SourceAccess,
  SourceAccessError,
  type SourceAccessErrorCode,
  type SourceAccessPolicy,
} from "./source-access.js";
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
export { sourceHostRules } from "./source-hosts.js";
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
  type SourceRunner,
  SourceRunnerError,
  type SourceRunnerErrorCode,
  type SourceRunnerOptions,
  type SourceRunnerOutcome,
  startSourceRunner,
} from "./source-runner.js";
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
