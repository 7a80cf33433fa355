/**
 * Frames in: frame sources (a browser tab's screencast, a video file or stream through ffmpeg, a
 * directory of images, frames a caller pushes), the limits every frame passes, the change score
 * against the last noted frame, frame storage (kept frames as artifacts, the latest frame of each
 * source), and `watchFrames`, which ties them into a stream of scored frames. See `docs/frames.md`.
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
  type PushedFrame,
  PushFrameSource,
  type PushFrameSourceOptions,
  type PushResult,
  pushFrameSource,
} from "./push-frames.js";
export { type RecordedScores, SCORES_PER_RECORD, ScoreRecorder } from "./score-recorder.js";
export { type ScreencastFramesOptions, screencastFrames } from "./screencast-frames.js";
export { type VideoFramesOptions, videoFrames } from "./video-frames.js";
