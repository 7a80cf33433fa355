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
export type {
  ChangeScore,
  FrameMime,
  FrameRef,
  IncomingFrame,
  ScoredFrame,
} from "./frame-types.js";
export {
  type Activity,
  activityOf,
  decideNote,
  type NoteDecision,
  type NoteScheduleState,
  type NoteTrigger,
} from "./note-schedule.js";
export {
  type RecordedWatchCalls,
  type RecordedWatchModel,
  recordedWatchCalls,
  recordedWatchModel,
} from "./recorded-watch-model.js";
export { isScreenQuestion, SCREEN_QUESTION_PATTERNS } from "./screen-question.js";
export {
  StreamWatch,
  type StreamWatchOptions,
  type WatchActivity,
  type WatchHooks,
} from "./stream-watch.js";
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
