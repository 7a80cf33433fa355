import type { ActionExecutor } from "../actions/index.js";
import {
  createFeedEngine,
  eventStoreFeedLog,
  FEED_EVENT_TYPES,
  type FeedClock,
  type FeedEngine,
  type FeedManifest,
  type FeedTimers,
  feedProjection,
  renderFeeds,
} from "../feeds/index.js";
import type { EventStore } from "../log/index.js";

/** The context feeds of the runtime's foreground agent. */
export interface RuntimeFeeds {
  /** The agent manifest's feeds (`context_feeds`, `feed_environment`). */
  manifest: FeedManifest;
  /** Executors of `tool` (and `relic`, `llm`, `workflow`) sources. */
  executors?: readonly ActionExecutor[];
  clock?: FeedClock;
  timers?: FeedTimers;
  env?: Record<string, string | undefined>;
}

/** A session's feeds: what a step's context shows of the world, and their shutdown. */
export interface SessionFeeds {
  /** The rendered feeds of `step` (refreshed as their policies say), or `undefined` for none. */
  read(step: string): Promise<string | undefined>;
  /** Stops the engine's timers. */
  stop(): Promise<void>;
}

/**
 * The feeds of one continuity. Live, a feed engine (started on first use, resumed from the
 * feed events already in the log) refreshes the sources and records every change on the
 * continuity's stream; each step reads the rendered snapshot. In replay, `recorded` serves each
 * step's feeds from the log instead (the world is not read again).
 */
export function createSessionFeeds(options: {
  store: EventStore;
  continuity: string;
  feeds?: RuntimeFeeds;
  recorded?: (step: string) => string | undefined;
}): SessionFeeds {
  const { store, continuity, feeds, recorded } = options;
  if (recorded) {
    return { read: async (step) => recorded(step), stop: async () => {} };
  }
  if (!feeds || feeds.manifest.feeds.length === 0) {
    return { read: async () => undefined, stop: async () => {} };
  }
  let engine: FeedEngine | undefined;
  let started: Promise<FeedEngine> | undefined;
  const start = async () => {
    const state = await store.fold({ continuity, types: FEED_EVENT_TYPES }, feedProjection);
    engine = createFeedEngine({
      log: eventStoreFeedLog(store, { continuity }),
      manifest: feeds.manifest,
      state,
      ...(feeds.executors ? { executors: feeds.executors } : {}),
      ...(feeds.clock ? { clock: feeds.clock } : {}),
      ...(feeds.timers ? { timers: feeds.timers } : {}),
      ...(feeds.env ? { env: feeds.env } : {}),
    });
    await engine.start();
    return engine;
  };
  return {
    async read(step) {
      started ??= start();
      const snapshot = await (await started).resolve(undefined, { step });
      const text = renderFeeds(snapshot);
      return text.trim() === "" ? undefined : text;
    },
    async stop() {
      if (started) await (await started.catch(() => undefined))?.stop();
    },
  };
}
