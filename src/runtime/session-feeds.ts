import type { ActionExecutor, AnyInternalAction } from "../actions/index.js";
import {
  createFeedEngine,
  emptyFeedState,
  eventStoreFeedLog,
  FEED_EVENT_TYPES,
  type FeedChanger,
  type FeedClock,
  type FeedEngine,
  type FeedManifest,
  type FeedRegistryState,
  type FeedTimers,
  feedInternalActions,
  feedProjection,
  feedSourceStep,
  feedVariables,
  type InternalSources,
  renderFeeds,
} from "../feeds/index.js";
import type { EventStore } from "../log/index.js";
import type { ActionType } from "../protocol/index.js";
import { closeInterruptedFeedReads } from "./feed-reads.js";

/** The context feeds of the runtime's foreground agent. */
export interface RuntimeFeeds {
  /** The agent manifest's feeds (`context_feeds`, `internal_actions`, `feed_environment`). */
  manifest: FeedManifest;
  /**
   * Executors of sources, at most one per type, run directly by the feed engine. A source type
   * without one here (by default all: `tool`, `relic`, `workflow`, `llm`) takes the runtime's
   * action path instead (see `FeedSourcePath`).
   */
  executors?: readonly ActionExecutor[];
  clock?: FeedClock;
  timers?: FeedTimers;
  env?: Record<string, string | undefined>;
}

/** A step's feeds: the rendered blocks of its context, and the values `$id` gives. */
export interface StepFeeds {
  text: string;
  /** `{ [id]: value }` of every feed with a value (`feedVariables` of the step's snapshot). */
  values: Record<string, string>;
}

/** A step's feeds as the log recorded them (`context.feeds`); logs before `values` lack them. */
export interface RecordedStepFeeds {
  text: string;
  values?: Record<string, string>;
}

/** One read of a feed's source through the runtime's action path. */
export interface FeedSourceAction {
  /** The feed's step stream (`feedSourceStep`). */
  step: string;
  /** Unique in that step over the continuity's life. */
  actionId: string;
  type: ActionType;
  name: string;
  parameters: Record<string, unknown>;
  signal: AbortSignal;
}

/**
 * The runtime's action path for feed sources: `run` runs the read as an action of its own step
 * (intent logged, the foreground directive's permissions checked, side effects serialized) and
 * resolves with its output; `canRun` says whether an executor of the type knows the name.
 */
export interface FeedSourcePath {
  canRun(type: ActionType, name: string): boolean;
  run(action: FeedSourceAction): Promise<unknown>;
}

/** A session's feeds: what a step's context shows of the world, the model's feed actions, and their shutdown. */
export interface SessionFeeds {
  /** The feeds of `step` (refreshed as their policies say), or `undefined` for none. */
  read(step: string): Promise<StepFeeds | undefined>;
  /**
   * The feed internal actions (`add_context_feed`, `update_context_feed`, `remove_context_feed`)
   * for the actions of `step`; none when the runtime has no feeds.
   */
  actions(step: string): AnyInternalAction[];
  /** Stops the engine's timers. */
  stop(): Promise<void>;
}

/** The source types the feed engine hands to executors. */
const EXECUTOR_SOURCE_TYPES = ["tool", "relic", "workflow", "llm"] as const;

/**
 * The feeds of one continuity. Live, a feed engine (started on first use, resumed from the feed
 * events already in the log) refreshes the sources and records every change on the continuity's
 * stream; each step reads its snapshot. A source type with no executor in `feeds.executors`
 * reads through `sources` (the runtime's action path), each read an action on the feed's step
 * stream. In replay, `recorded` serves each step's feeds from the log instead (the world is not
 * read again), and the model's feed actions run on the registry the log had when the original
 * ran them (`registry`), never reading a source.
 */
export function createSessionFeeds(options: {
  store: EventStore;
  continuity: string;
  feeds?: RuntimeFeeds;
  sources?: FeedSourcePath;
  /** Internal sources the runtime adds to the built-ins (the `memory` feed's). */
  internalSources?: InternalSources;
  recorded?: (step: string) => RecordedStepFeeds | undefined;
  registry?: (step: string, actionId: string) => FeedRegistryState;
}): SessionFeeds {
  const { store, continuity, feeds, recorded } = options;
  if (!feeds) {
    return {
      read: async (step) => fromRecord(recorded?.(step)),
      actions: () => [],
      stop: async () => {},
    };
  }
  let next = 0;
  let base: number | undefined;
  const executors = [
    ...(feeds.executors ?? []),
    ...(options.sources ? sourceExecutors(feeds, options.sources, () => `r${base}-${++next}`) : []),
  ];
  const engineOptions = (state: FeedRegistryState) => ({
    log: eventStoreFeedLog(store, { continuity }),
    manifest: feeds.manifest,
    state,
    executors,
    ...(options.internalSources ? { internalSources: options.internalSources } : {}),
    ...(feeds.clock ? { clock: feeds.clock } : {}),
    ...(feeds.timers ? { timers: feeds.timers } : {}),
    ...(feeds.env ? { env: feeds.env } : {}),
  });
  if (recorded) {
    const registry = options.registry;
    return {
      read: async (step) => fromRecord(recorded(step)),
      // Each action meets the registry the original's did; the engine is never started, so it
      // records the action's change and reads nothing.
      actions: (step) =>
        boundActions((actionId) =>
          createFeedEngine(engineOptions(registry?.(step, actionId) ?? emptyFeedState())),
        ),
      stop: async () => {},
    };
  }
  let started: Promise<FeedEngine> | undefined;
  const start = async () => {
    // Reads a crash cut off are closed first; this process's reads are named after the log's
    // head at start, so a restart never reuses an id.
    if (options.sources) await closeInterruptedFeedReads(store, continuity);
    base = await store.head();
    const state = await store.fold({ continuity, types: FEED_EVENT_TYPES }, feedProjection);
    const engine = createFeedEngine(engineOptions(state));
    await engine.start();
    return engine;
  };
  const engine = () => {
    started ??= start();
    return started;
  };
  return {
    async read(step) {
      const snapshot = await (await engine()).resolve(undefined, { step });
      const text = renderFeeds(snapshot);
      return text.trim() === "" ? undefined : { text, values: feedVariables(snapshot) };
    },
    actions: () => boundActions(() => engine()),
    async stop() {
      await (await started?.catch(() => undefined))?.stop();
    },
  };
}

function fromRecord(record: RecordedStepFeeds | undefined): StepFeeds | undefined {
  return record && { text: record.text, values: record.values ?? {} };
}

/** The feed actions, each handing its request to the engine `engineFor` gives for its call. */
function boundActions(
  engineFor: (actionId: string) => FeedChanger | Promise<FeedChanger>,
): AnyInternalAction[] {
  const changer = (origin: { actionId?: string } | undefined) =>
    Promise.resolve(engineFor(origin?.actionId ?? ""));
  return feedInternalActions({
    add: async (definition, origin) => (await changer(origin)).add(definition, origin),
    update: async (update, origin) => (await changer(origin)).update(update, origin),
    remove: async (id, origin) => (await changer(origin)).remove(id, origin),
  });
}

/**
 * An executor per source type `feeds.executors` leaves out, each read taking `path`: the call's
 * `feed:<id>` names the feed, whose step stream the action goes on with a fresh id.
 */
function sourceExecutors(
  feeds: RuntimeFeeds,
  path: FeedSourcePath,
  nextId: () => string,
): ActionExecutor[] {
  const given = new Set((feeds.executors ?? []).map((executor) => executor.type));
  return EXECUTOR_SOURCE_TYPES.filter((type) => !given.has(type)).map((type) => ({
    type,
    canRun: (name: string) => path.canRun(type, name),
    execute: (call) =>
      path.run({
        step: feedSourceStep(call.actionId.replace(/^feed:/, "")),
        actionId: nextId(),
        type,
        name: call.name,
        parameters: call.parameters,
        signal: call.signal,
      }),
  }));
}
