// Continuous inputs with durable cursors: the adapter contract, the adapters, and their runner.
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
