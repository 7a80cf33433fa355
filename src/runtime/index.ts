/**
 * The agent runtime: turns on continuities run threads of a directive step by step (compile the
 * context, stream the model, run its actions as they close, log every decision) until the
 * work is done; limits, permissions at dispatch, queued or interrupting turns, side effects of one
 * continuity one at a time. See `docs/runtime.md`.
 */

export { formatActionResults, RESULT_TEXT_MAX, type ReportedAction } from "./action-results.js";
export {
  ACTOR_EVENT_TYPES,
  ActorAccessError,
  type ActorAccessLevel,
  type ActorRoster,
  ActorRosters,
  applyActorEvent,
  checkTurnActor,
  emptyActorRoster,
  type TurnRefusal,
  turnRefusal,
} from "./actor-access.js";
export { runThreadLoop } from "./agent-loop.js";
export type { ThreadRunOptions, ThreadRunResult } from "./agent-loop-types.js";
export {
  type AgentRuntime,
  type AgentRuntimeOptions,
  type AgentSpec,
  createAgentRuntime,
  fillInputs,
  type TurnInput,
} from "./agent-runtime.js";
export type { InterceptedCall, RuntimeWorld } from "./agent-runtime-types.js";
export {
  type AgentStepOptions,
  type AgentStepResult,
  type ExecutorFactory,
  runAgentStep,
  type StepScope,
} from "./agent-step.js";
export { resolveImages, withArtifactImages } from "./artifact-images.js";
export { createAgentExecutor, createLlmExecutor, type SpawnChild } from "./child-executors.js";
export { pinId } from "./continuity-actions.js";
export {
  ContinuityLease,
  ContinuityLiveError,
  DEFAULT_LEASE_TTL_MS,
  defaultLeaseHolder,
  type LeaseOptions,
} from "./continuity-lease.js";
export { ContinuityOwners, type ContinuityOwnersOptions } from "./continuity-owners.js";
export {
  applyContinuityEvent,
  type ContinuityState,
  continuityStateProjection,
  emptyContinuityState,
  foldContinuityState,
  isBackgroundThread,
  isChildThread,
  loadContinuityState,
  type ThreadState,
} from "./continuity-state.js";
export {
  ConversationTail,
  type ConversationTailOptions,
  type LoggedActivity,
} from "./conversation-tail.js";
export {
  type GateOptions,
  gateExecutor,
  type PermissionCheck,
} from "./gated-executor.js";
export {
  type InnerAction,
  type InnerActionOptions,
  runInnerAction,
  type StepExecutorScope,
} from "./inner-action.js";
export { decide, type RunLimits } from "./loop-decision.js";
export {
  DEFAULT_SCREENSHOTS_IN_CONTEXT,
  PageSlot,
  pageImage,
  pageLine,
  pageResultOf,
  supersededPages,
} from "./page-slot.js";
export { type RecoverOptions, type Recovery, type RerunCall, recoverRun } from "./recovery.js";
export type { RunLimitName, RunNotice, RunObserver, RunStatus, RunTotals } from "./run-notice.js";
export type {
  FeedSourceAction,
  FeedSourcePath,
  RecordedStepFeeds,
  RuntimeFeeds,
  StepFeeds,
} from "./session-feeds.js";
export type { ContinuityActivity, RuntimeWatch, TurnAttachment } from "./session-watch.js";
export type { ModelWindowSettings } from "./session-windows.js";
export {
  SourceChangeError,
  type SourceChangeErrorCode,
  type SourceChanger,
  SourceChanges,
} from "./source-changes.js";
export type { RuntimeSources, SourcesView } from "./source-config.js";
export { catchUp } from "./step-ahead.js";
export {
  type CompiledCursor,
  type StepRequest,
  type StepRequestInput,
  stepRequest,
} from "./step-cursor.js";
export { buildSystemPrompt, PROTOCOL_GUIDE, type SystemPromptParts } from "./system-prompt.js";
export { type HistoryMessage, type ThreadCursor, ThreadHistory } from "./thread-history.js";
