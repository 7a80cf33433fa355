/**
 * Context feeds: values the model sees in every prompt (`<context_feed id="…">`) and as `$id`,
 * refreshed on demand or periodically from internal, tool, relic, workflow or llm sources.
 * Every change is an event, so `replayFeeds` rebuilds the registry from the log.
 */
export { BUILT_IN_SOURCES } from "./built-in-sources.js";
export { expandEnvString, expandEnvValue, type FeedEnv, isEnabledFlag } from "./env-expansion.js";
export {
  checkEnvironmentName,
  type EnvironmentPolicy,
  NO_ENVIRONMENT,
  secretMarker,
} from "./environment-policy.js";
export { environmentSource } from "./environment-source.js";
export {
  type FeedClock,
  type FeedTimers,
  systemFeedClock,
  systemFeedTimers,
} from "./feed-clock.js";
export {
  type ExecutorSourceRef,
  FEED_ID_PATTERN,
  FEED_SOURCE_TYPES,
  FEED_TYPES,
  type FeedDefinition,
  type FeedSourceRef,
  type FeedSourceType,
  type FeedType,
  feedDefinitionSchema,
  type InternalSourceRef,
  MIN_INTERVAL_SECONDS,
} from "./feed-definition.js";
export {
  createFeedEngine,
  DEFAULT_MAX_TOKENS,
  DEFAULT_SOURCE_TIMEOUT_MS,
  type FeedChangeOrigin,
  type FeedEngine,
  type FeedEngineOptions,
  type ResolveOptions,
} from "./feed-engine.js";
export { FeedError, type FeedErrorCode } from "./feed-error.js";
export {
  FEED_ACTION_NAMES,
  type FeedChanger,
  type FeedInternalActions,
  feedInternalActions,
} from "./feed-internal-actions.js";
export type { FeedIssue } from "./feed-issues.js";
export { formatIssuePath, preview, unknownFields, zodFeedIssues } from "./feed-issues.js";
export {
  eventStoreFeedLog,
  FEED_EVENT_TYPES,
  type FeedEventType,
  type FeedLog,
  type FeedLogTarget,
} from "./feed-log.js";
export {
  type FeedManifest,
  type ParseFeedManifestOptions,
  parseFeedManifest,
} from "./feed-manifest.js";
export { type FeedSnapshot, type FeedSnapshotEntry, snapshotFeeds } from "./feed-snapshot.js";
export {
  FEED_SOURCE_STEP_PREFIX,
  feedSourceStep,
  isFeedSourceStream,
} from "./feed-source-steps.js";
export {
  applyFeedEvent,
  emptyFeedState,
  type FeedEventLike,
  type FeedFailure,
  type FeedOwner,
  type FeedRecord,
  type FeedRegistryState,
} from "./feed-state.js";
export { type FeedChanges, type FeedUpdate, feedUpdateSchema } from "./feed-update.js";
export { feedValueSource, feedVariableSource, feedVariables } from "./feed-variables.js";
export { ALLOW_ALL_INTERNAL_ACTIONS } from "./internal-actions-policy.js";
export {
  defineInternalSource,
  type InternalFeedSource,
  type InternalSourceCheckContext,
  type InternalSourceContext,
  type InternalSources,
} from "./internal-source.js";
export { randomNumber, randomSource, randomUuid } from "./random-source.js";
export { neutraliseFeedTags, renderFeeds } from "./render-feeds.js";
export { feedProjection, replayFeeds } from "./replay-feeds.js";
export {
  CLOCK_FORMATS,
  formatClock,
  isTimeZone,
  systemClockSource,
} from "./system-clock-source.js";
export { estimateTokens } from "./token-estimate.js";
export { type TruncatedValue, truncateToTokens, truncationMarker } from "./truncate-value.js";
export type { TextPosition } from "./yaml-location.js";
export { locateYamlPath } from "./yaml-location.js";
