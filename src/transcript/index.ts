export {
  type CheckpointData,
  type CheckpointProblem,
  type CheckpointProblemKind,
  checkCheckpoint,
} from "./checkpoint-check.js";
export { CheckpointError, type CheckpointErrorCode } from "./checkpoint-error.js";
export {
  type KeysDirOptions,
  loadTrustedKeys,
  RETIRED_KEYS_DIR,
  resolveKeysDir,
  retireCurrentKey,
} from "./checkpoint-keys.js";
export {
  type CheckpointReport,
  type UnsignedTail,
  type VerifyCheckpointsOptions,
  verifyCheckpoints,
} from "./checkpoint-verify.js";
export {
  type CheckpointEvent,
  type CheckpointReason,
  type WriteCheckpointOptions,
  writeCheckpoint,
} from "./checkpoint-writer.js";
export { EarlyCall, StartCarry } from "./early-call.js";
export { KnowledgeFold, renderKnowledge } from "./knowledge-render.js";
export {
  createKnowledgeSink,
  type KnowledgeSink,
  type KnowledgeSinkOptions,
  type KnowledgeSource,
} from "./knowledge-sink.js";
export { createLogSink, type LogSinkOptions, type LogStreamSink } from "./log-sink.js";
export { type ModelStepOptions, type ModelStepResult, runModelStep } from "./model-step.js";
export { createReturnSink, type ReturnSink } from "./return-sink.js";
export {
  type CheckpointPayload,
  type CheckpointSigner,
  checkpointText,
  initKeys,
  keyIdOf,
  loadPublicKeys,
  loadSigner,
  PRIVATE_KEY_FILE,
  PUBLIC_KEY_FILE,
  signerFromPem,
  verifySignature,
} from "./signing.js";
export { describeSinkError, type SinkReport, type StreamSink, sinkReportEvent } from "./sink.js";
export { createSinkFanout, type SinkFanout, type SinkFanoutOptions } from "./sink-fanout.js";
export {
  finishThread,
  handOffThread,
  resumeThread,
  type ThreadBoundary,
  type ThreadBoundaryOptions,
  transcriptDigestOption,
} from "./thread-boundaries.js";
export {
  resolveThreadsDir,
  type ThreadFileSinks,
  ThreadFiles,
  type ThreadFilesOptions,
  type ThreadsDirOptions,
} from "./thread-files.js";
export {
  isThreadStream,
  parseStepStreamId,
  stepStreamId,
  ThreadMembership,
  taskStepId,
} from "./thread-streams.js";
export { compareWithLog, type TranscriptDifference } from "./transcript-compare.js";
export {
  type FileLine,
  type RestoredTranscript,
  readFileLines,
  restoreTranscriptFile,
} from "./transcript-file.js";
export {
  lifecycleLineSchema,
  parseTranscriptLine,
  renderTranscriptLines,
  renderTranscriptText,
  type TranscriptLine,
  tokenDeltaLine,
  transcriptLineSchema,
} from "./transcript-lines.js";
export {
  createTranscriptProjection,
  type TranscriptProjection,
  type TranscriptProjectionOptions,
  type TranscriptResumeState,
} from "./transcript-projection.js";
export {
  findThreadContinuity,
  rebuildTranscript,
  streamTranscript,
} from "./transcript-rebuild.js";
export {
  createTranscriptSink,
  type TranscriptSink,
  type TranscriptSinkOptions,
} from "./transcript-sink.js";
export {
  type TranscriptProblem,
  type TranscriptProblemKind,
  type TranscriptReport,
  type VerifyTranscriptOptions,
  verifyTranscriptFile,
} from "./transcript-verify.js";
