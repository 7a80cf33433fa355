/**
 * The action scheduler: runs the actions a model writes in one step (modes, the depends_on DAG,
 * `$variables`, timeout/retry/on_error, cancellation), the executors of tools and internal
 * actions, the action log, and `runStep`, which drives it all from a streaming model output.
 * See `docs/actions.md`.
 */
export { mayRetry, toActionError } from "./action-error.js";
export type {
  ActionLog,
  ActionLogData,
  ActionLogEntry,
  ActionLogType,
  RecordScope,
} from "./action-log.js";
export { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
export type { ActionRefusal, CheckedActionExecutor, RefusalReason } from "./checked-executor.js";
export { type SchedulerClock, systemClock } from "./clock.js";
export { type AddResult, DependencyGraph, type SettleResult } from "./dependency-graph.js";
export type { ActionCall, ActionExecutor } from "./executor.js";
export {
  type AnyInternalAction,
  defineInternalAction,
  type InternalActionContext,
  type InternalActionDefinition,
  type InternalActionsPolicy,
  internalActionRefusal,
  internalActionsPolicySchema,
} from "./internal-action.js";
export {
  createInternalExecutor,
  type InternalActionTable,
  type InternalExecutorOptions,
  internalActionTable,
  withInternalActions,
} from "./internal-executor.js";
export { deepFreeze, toJsonValue } from "./json-value.js";
export {
  createMemoryActionLog,
  type MemoryActionLog,
  type MemoryActionLogOptions,
} from "./memory-action-log.js";
export { OrderedQueue } from "./ordered-queue.js";
export { describeParameterIssues } from "./parameter-issues.js";
export {
  createResponseSubstituter,
  type ResponseSubstituter,
  type ResponseSubstituterOptions,
  type SubstitutionPiece,
} from "./response-substitution.js";
export { SerialQueue } from "./serial-queue.js";
export type {
  ActionErrorData,
  ActionOutcome,
  ActionStatus,
  SkipReason,
  StepError,
  StepOutcome,
} from "./step-outcome.js";
export type { StepOutputEvent, StepSummary } from "./step-output-event.js";
export { type RunStepOptions, runStep, type StepRun } from "./step-runner.js";
export {
  createStepScheduler,
  type SchedulerObserver,
  type StepScheduler,
  type StepSchedulerOptions,
} from "./step-scheduler.js";
export {
  createStoreActionLog,
  type StoreActionLogOptions,
  taskStreamId,
} from "./store-action-log.js";
export {
  substituteParameters,
  substituteString,
  substituteText,
} from "./substitute-parameters.js";
export { TaskSet } from "./task-set.js";
export { defineTool, type ToolContext, type ToolDefinition } from "./tool-definition.js";
export { createToolExecutor } from "./tool-executor.js";
export { type AnyTool, createToolRegistry, type ToolRegistry } from "./tool-registry.js";
export {
  deleteVariableAction,
  internalVariableActions,
  setVariableAction,
} from "./variable-actions.js";
export {
  type Accessor,
  interpolateValue,
  type ResolvedReference,
  resolveReference,
  type ScannedReference,
  scanReference,
} from "./variable-reference.js";
export {
  createVariableStore,
  type VariableSource,
  type VariableStore,
  type VariableStoreOptions,
} from "./variable-store.js";
