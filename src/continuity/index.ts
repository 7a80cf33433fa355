/**
 * The continuity module: what a thread's model call is given and how a thread's work outlives its
 * context window. `compileContext` builds each request from a `ThreadView` (system prompt with the
 * pinned rules and facts, the lineage's summary chain, context feeds, the newest whole messages)
 * inside a token budget; `recordBundle` stores what went into it; `createSummaryWorker` makes
 * summaries in the background and `handOff` seeds a continuation thread with the summary chain
 * and the trailing messages (`selectTrailing`), telling it where each source's stream stands
 * (`seedPositions`). The compiler and the selections are pure; only the worker, the handoff and
 * the bundle record touch a store.
 */

export {
  BUNDLE_MEDIA_TYPE,
  type BundleManifest,
  type BundleReferences,
  bundleManifest,
  type CompiledData,
  compiledData,
  prepareBundle,
  recordBundle,
} from "./bundle-record.js";
export {
  type BundleParts,
  CONTINUE_TEXT,
  type ContextBundle,
  type ContextMessage,
  type ContextPolicy,
  type DirectiveContext,
  HANDOFF_HEADING,
  MEMORY_HEADING,
  memoryMessage,
  type PageResult,
  type PinnedItem,
  type RecalledItem,
  type SeqRange,
  type SummaryItem,
  summaryMessage,
  type ThreadView,
} from "./context-bundle.js";
export {
  compileContext,
  mergeUserMessages,
  messageTokens,
  systemPrompt,
  textTokens,
  unitEnd,
  unitStart,
} from "./context-compiler.js";
export {
  continuationId,
  type HandoffInput,
  type HandoffResult,
  handOff,
  MAX_CHAIN,
} from "./handoff.js";
export { IMAGE_LEFT_OUT, IMAGE_NOT_CARRIED, withoutCarriedImages } from "./image-fallback.js";
export {
  cutInputText,
  INPUT_CUT_MEDIA_TYPE,
  type InputCutData,
  inputTokenLimit,
  logInputCuts,
  type PlannedCut,
  planInputCuts,
  userText,
} from "./input-cuts.js";
export { requestDigest } from "./request-digest.js";
export {
  type ChunkSpanData,
  messageToSeed,
  positionFromData,
  positionToData,
  type SeedMessageData,
  type StreamPositionData,
  type SummaryLinkData,
  seedToMessage,
  spanFromData,
  spanToData,
  streamPositionsText,
  summaryFromData,
} from "./seed-messages.js";
export {
  type ChunkCursor,
  type ChunkRange,
  type ChunkSpan,
  chunkWords,
  deliveredSpans,
  mergeSpans,
  renderSourcesInput,
  type SeedPositionsInput,
  type SourceMode,
  type StreamPosition,
  seedPositions,
} from "./source-coverage.js";
export {
  type AfterStepInput,
  afterHandoffAttempt,
  afterStepDecision,
  beforeStepDecision,
  INITIAL_PRESSURE_STATE,
  type StepDecision,
  type StepPressure,
  stepPressure,
  type ThreadPressureState,
} from "./step-decision.js";
export {
  BROWSER_SUMMARIZER,
  IMAGE_SUMMARIZER,
  type SelectSummarizerOptions,
  type SummarizerChoice,
  type SummarizerSource,
  selectSummarizer,
} from "./summarizer-selection.js";
export {
  createSummaryWorker,
  type SummarizeCall,
  type SummaryJob,
  type SummaryMode,
  type SummaryOutcome,
  type SummaryWorker,
  type SummaryWorkerOptions,
} from "./summary-worker.js";
export { selectTrailing, type TrailingSelection } from "./trailing.js";
export {
  type RenderTranscriptOptions,
  renderSummarizerInputs,
  renderTranscript,
  type SummarizerInputs,
} from "./transcript-content.js";
