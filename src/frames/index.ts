/**
 * Frames in: frame sources (a browser tab's screencast, a video file or stream through ffmpeg, a
 * directory of images, frames a caller pushes), the limits every frame passes, the change score
 * against the last noted frame, frame storage (kept frames as artifacts, the latest frame of each
 * source), and `watchFrames`, which ties them into a stream of scored frames. See `docs/frames.md`; the stream-watch loops (note-taker, rolling notes, commentary, settings) are in `docs/stream-watch.md`.
 */

export { BoundedQueue, type OverflowPolicy } from "./bounded-queue.js";
export {
  type ChangeInput,
  type ChangeRules,
  type ChangeState,
  type ChangeVerdict,
  checkChangeRules,
  DEFAULT_CHANGE_RULES,
  decideChange,
  initialChangeState,
  meanAbsoluteDifference,
  notedChange,
} from "./change-rules.js";
export { ChangeScorer, type ChangeScorerOptions } from "./change-scorer.js";
export {
  type CommentaryReply,
  parseCommentaryReply,
} from "./commentary-reply.js";
export {
  type CommentaryDecision,
  type CommentaryGate,
  type CommentaryState,
  type CommentaryTrigger,
  decideCommentary,
} from "./commentary-schedule.js";
export { type DirectoryFramesOptions, directoryFrames } from "./directory-frames.js";
export { bundledFfmpegPath } from "./ffmpeg-path.js";
export { FrameError, type FrameErrorCode } from "./frame-error.js";
export {
  type Admission,
  checkFrameLimits,
  DEFAULT_FRAME_LIMITS,
  FrameLimiter,
  type FrameLimits,
} from "./frame-limits.js";
export { FrameLog, type FrameLogTarget } from "./frame-log.js";
export {
  DEFAULT_MAX_FRAME_BYTES,
  type FrameSourceEvent,
  type FrameSourceKind,
  type FrameSourceOptions,
} from "./frame-source.js";
export {
  applyFrameEvent,
  FRAME_STATE_EVENT_TYPES,
  type FrameSourceState,
  type RecordedScore,
  readFrameSources,
} from "./frame-sources-state.js";
export {
  FrameStorage,
  type FrameStorageOptions,
  framesFolder,
  type LatestFrame,
  latestFramePath,
} from "./frame-storage.js";
export {
  DEFAULT_THUMBNAIL,
  decodeThumbnail,
  MAX_FRAME_PIXELS,
  type ThumbnailSize,
} from "./frame-thumbnail.js";
export type {
  ChangeScore,
  FrameMime,
  FrameRef,
  IncomingFrame,
  ScoredFrame,
} from "./frame-types.js";
export {
  type FrameSourceHooks,
  FrameWatch,
  type FrameWatchOptions,
  type FrameWatchStats,
  watchFrames,
} from "./frame-watch.js";
export { type ImageHeader, readImageHeader } from "./image-header.js";
export { JpegSplitter, type SplitPiece } from "./jpeg-splitter.js";
export {
  type Activity,
  activityOf,
  decideNote,
  type NoteDecision,
  type NoteScheduleState,
  type NoteTrigger,
} from "./note-schedule.js";
export {
  type PushedFrame,
  PushFrameSource,
  type PushFrameSourceOptions,
  type PushResult,
  pushFrameSource,
} from "./push-frames.js";
export {
  type RecordedWatchCalls,
  type RecordedWatchModel,
  recordedWatchCalls,
  recordedWatchModel,
} from "./recorded-watch-model.js";
export { type RecordedScores, SCORES_PER_RECORD, ScoreRecorder } from "./score-recorder.js";
export { isScreenQuestion, SCREEN_QUESTION_PATTERNS } from "./screen-question.js";
export { type ScreencastFramesOptions, screencastFrames } from "./screencast-frames.js";
export {
  StreamWatch,
  type StreamWatchOptions,
  type WatchActivity,
  type WatchHooks,
} from "./stream-watch.js";
export { type VideoFramesOptions, videoFrames } from "./video-frames.js";
export { type CommentaryRun, runCommentary } from "./watch-commentary.js";
export {
  LEGACY_WATCH_KEYS,
  migrateWatchSettings,
  type WatchMigration,
  type WatchMigrationResult,
} from "./watch-migration.js";
export {
  COMMENTARY_PROMPT,
  COMPACTION_PROMPT,
  type CommentaryInput,
  createWatchModel,
  imagePart,
  NOTE_PROMPT,
  type WatchAnswer,
  WatchCallError,
  type WatchCallTarget,
  type WatchModel,
} from "./watch-model.js";
export { NOTES_HEADING, noteLine, renderWatchNotes } from "./watch-notes-text.js";
export { type AgentWatchSettings, readWatchSection } from "./watch-section.js";
export {
  changedWatchSettings,
  DEFAULT_WATCH_SETTINGS,
  parseWatchSettings,
  WATCH_RANGES,
  WATCH_SETTING_NAMES,
  type WatchRangeName,
  type WatchSettingIssue,
  type WatchSettings,
  watchSettingsError,
} from "./watch-settings.js";
export { readWatchSource, type WatchSourceConfig } from "./watch-source.js";
export {
  type CompactionPlan,
  emptyWatchState,
  foldWatchEvent,
  foldWatchEvents,
  type NoteEntry,
  type NoteFrame,
  planCompaction,
  WATCH_EVENT_TYPES,
  type WatchCounts,
  type WatchState,
} from "./watch-state.js";
