// Continuous inputs with durable cursors: the adapter contract, the adapters, and their runner.

// The line core (splitting, batching) and the file, dataset and command sources.
export { ChunkBatcher, compileFilter, filterKeeps } from "./chunk-batcher.js";
export {
  type CommandCursor,
  type CommandSourceOptions,
  createCommandSource,
  parseCommandCursor,
} from "./command-source.js";
export { compareDatasetPaths } from "./dataset-files.js";
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
export { LineSplitter, type SplitLine } from "./line-splitter.js";
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
export { createSseSource, sseSourceOptions } from "./sse-source.js";
export { createWebSocketSource, websocketSourceOptions } from "./websocket-source.js";
