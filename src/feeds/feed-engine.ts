import type { ActionExecutor } from "../actions/index.js";
import type { FeedEnv } from "./env-expansion.js";
import type { EnvironmentPolicy } from "./environment-policy.js";
import type { FeedClock, FeedTimers } from "./feed-clock.js";
import type { FeedDefinition } from "./feed-definition.js";
import type { FeedLog } from "./feed-log.js";
import type { FeedManifest } from "./feed-manifest.js";
import type { FeedSnapshot } from "./feed-snapshot.js";
import type { FeedOwner, FeedRegistryState } from "./feed-state.js";
import type { FeedChanges } from "./feed-update.js";
import type { InternalSources } from "./internal-source.js";
import { LiveFeedEngine } from "./live-feed-engine.js";

export { DEFAULT_MAX_TOKENS } from "./live-feed-engine.js";
export { DEFAULT_SOURCE_TIMEOUT_MS } from "./source-dependencies.js";

/** Options of `createFeedEngine`. */
export interface FeedEngineOptions {
  /** Where every change is recorded. */
  log: FeedLog;
  /** The manifest's feeds and policies (`parseFeedManifest`); none: no feeds at start. */
  manifest?: FeedManifest;
  /** Executors for `tool`, `relic`, `workflow` and `llm` sources, at most one per type. */
  executors?: readonly ActionExecutor[];
  /** Internal sources beside the built-ins (a same-named one replaces the built-in). */
  internalSources?: InternalSources;
  /** Default `systemFeedClock`. */
  clock?: FeedClock;
  /** Default `systemFeedTimers`. */
  timers?: FeedTimers;
  /** A number in [0, 1) for the `random` source. Default: from `crypto.getRandomValues`. */
  random?: () => number;
  /** What the `environment` source reads. Default `process.env`. */
  env?: FeedEnv;
  /** Added to the manifest's `feed_environment` allow-lists. */
  environment?: Partial<EnvironmentPolicy>;
  /** `max_tokens` for feeds that set none. Default `DEFAULT_MAX_TOKENS` (4,000). */
  defaultMaxTokens?: number;
  /** Per source read. Default `DEFAULT_SOURCE_TIMEOUT_MS` (30 s). */
  sourceTimeoutMs?: number;
  /**
   * A registry to resume from (`replayFeeds` over the log). `start()` then reconciles it with the
   * manifest: missing manifest feeds are added, changed ones updated, manifest feeds no longer in
   * it removed; feeds added by actions or the runtime are kept.
   */
  state?: FeedRegistryState;
  /**
   * Called with failures of background work that have nowhere else to go: a periodic refresh
   * whose event could not be recorded. Default: `process.emitWarning`.
   */
  onError?: (error: unknown) => void;
}

/** Who asks for a change; recorded as the event's `by` and `action_id`. Default `runtime`. */
export interface FeedChangeOrigin {
  by?: FeedOwner;
  actionId?: string;
  /**
   * Where this change's event goes instead of the engine's log: an internal action passes its
   * step's log, so the change sits beside the action that made it. The engine's order of
   * changes holds across logs (each event is recorded before the next is started).
   */
  log?: FeedLog;
}

/** Options of `FeedEngine.resolve`. */
export interface ResolveOptions {
  /**
   * The step asking. An on_demand feed without `cache_ttl` is fetched once per step: a second
   * `resolve` with the same `step` reuses the first fetch. Without `step`, every call is a step.
   */
  step?: string;
}

/**
 * Holds the feeds of one agent, keeps their values current, and records every change.
 *
 * Contract:
 * - Every change of state is one event through `log`, recorded before the state changes and one
 *   at a time, so `replayFeeds` over the log gives exactly `state()`.
 * - Periodic feeds refresh in the background every `interval` seconds between `start()` and
 *   `stop()` (and once at start). A tick that finds the previous refresh still running is
 *   skipped. A failed refresh records `feed.failed` and keeps the last good value. A periodic
 *   refresh that yields the current value again, or fails again with the same error, records
 *   nothing.
 * - On_demand feeds are fetched by `resolve`: within `cache_ttl` seconds of the last value the
 *   value is reused; without `cache_ttl`, once per step. Concurrent requests share one fetch.
 * - Values are strings (objects as pretty JSON), cut to `max_tokens` with a visible marker.
 * - Source failures never reject; `add`, `update`, `remove` reject with a `FeedError` for a bad
 *   request, and anything rejects when the log cannot record.
 */
export interface FeedEngine {
  /** Records the manifest's feeds (reconciled with a resumed state), then starts the timers. */
  start(): Promise<void>;
  /** Clears every timer, abandons refreshes in flight (nothing more is recorded for them). */
  stop(): Promise<void>;
  /** Brings the feeds (default all) up to date for a step, then returns their snapshot. */
  resolve(ids?: readonly string[], options?: ResolveOptions): Promise<FeedSnapshot>;
  /** The feeds' current values, without fetching anything. */
  snapshot(ids?: readonly string[]): FeedSnapshot;
  /** Adds a feed (the manifest's shape). `feed.invalid`, `feed.duplicate`, `feed.unknown-source`, `feed.env-not-allowed`. */
  add(definition: unknown, origin?: FeedChangeOrigin): Promise<FeedDefinition>;
  /** Changes a feed: `{ id, ...fields }` as `feedUpdateSchema` reads it. `feed.unknown`, `feed.invalid`. */
  update(
    update: unknown,
    origin?: FeedChangeOrigin,
  ): Promise<{ definition: FeedDefinition; changes: FeedChanges }>;
  /** Removes a feed and stops its timer. `feed.unknown`. */
  remove(id: string, origin?: FeedChangeOrigin): Promise<void>;
  /** Copies of the current definitions, in the order they were added. */
  definitions(): FeedDefinition[];
  /** A copy of the registry (what `replayFeeds` over this engine's log gives). */
  state(): FeedRegistryState;
  /** Resolves when no refresh is running and every event is recorded (for tests and shutdown). */
  idle(): Promise<void>;
}

/**
 * Makes a feed engine. Validates the manifest's internal sources (and environment allow-list)
 * now, throwing a `ConfigError`; records nothing until `start()`.
 */
export function createFeedEngine(options: FeedEngineOptions): FeedEngine {
  return new LiveFeedEngine(options);
}
