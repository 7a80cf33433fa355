import type { z } from "zod";
import { ConfigError, describeError, type NewEventOf, SpoolError } from "../spec/index.js";
import { type FeedDefinition, feedDefinitionSchema } from "./feed-definition.js";
import type {
  FeedChangeOrigin,
  FeedEngine,
  FeedEngineOptions,
  ResolveOptions,
} from "./feed-engine.js";
import { FeedError, unknownFeedError } from "./feed-error.js";
import { describeIssues, zodFeedIssues } from "./feed-issues.js";
import type { FeedEventType, FeedLog } from "./feed-log.js";
import { referencedFeeds } from "./feed-references.js";
import { FeedRefresher } from "./feed-refresher.js";
import { type FeedSnapshot, snapshotFeeds } from "./feed-snapshot.js";
import {
  applyFeedEvent,
  cloneFeedState,
  emptyFeedState,
  type FeedOwner,
  type FeedRegistryState,
} from "./feed-state.js";
import {
  diffDefinitions,
  type FeedChanges,
  feedUpdateSchema,
  mergeFeedUpdate,
} from "./feed-update.js";
import { prepareInternalSource } from "./internal-source.js";
import type { SourceDependencies } from "./read-feed-source.js";
import { sourceDependencies } from "./source-dependencies.js";

/** The `max_tokens` of a feed that sets none. */
export const DEFAULT_MAX_TOKENS = 4000;

/**
 * The `FeedEngine` (see its contract in `feed-engine.ts`). Definitions change only through
 * `#commit`, which records each event and then applies it with the same fold `replayFeeds` uses,
 * one at a time; the timers and refreshes live in a `FeedRefresher`.
 */
export class LiveFeedEngine implements FeedEngine {
  readonly #log: FeedLog;
  readonly #manifest: FeedManifest | undefined;
  readonly #deps: SourceDependencies;
  readonly #state: FeedRegistryState;
  readonly #refresher: FeedRefresher;
  #queue: Promise<unknown> = Promise.resolve();
  #started = false;
  #starting: Promise<void> | undefined;

  constructor(options: FeedEngineOptions) {
    this.#log = options.log;
    this.#manifest = options.manifest;
    this.#deps = sourceDependencies(options);
    this.#state = options.state ? cloneFeedState(options.state) : emptyFeedState();
    this.#refresher = new FeedRefresher({
      deps: this.#deps,
      defaultMaxTokens: options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
      onError: options.onError ?? warn,
      state: this.#state,
      started: () => this.#started,
      commit: (type, prepare) => this.#commit(type, prepare),
    });
    for (const definition of options.manifest?.feeds ?? []) {
      try {
        this.#checkSource(definition);
      } catch (error) {
        if (!(error instanceof SpoolError)) throw error;
        throw new ConfigError("config.feeds", `context_feeds: ${error.message}`, { cause: error });
      }
    }
  }

  start(): Promise<void> {
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #start(): Promise<void> {
    if (this.#started) return;
    if (this.#manifest) await this.#reconcile(this.#manifest.feeds);
    this.#started = true;
    for (const [id, record] of this.#state.feeds) {
      if (record.definition.type !== "periodic") continue;
      this.#refresher.schedule(id);
      this.#refresher.background(id, "initial");
    }
  }

  async stop(): Promise<void> {
    await this.#starting?.catch(() => undefined);
    this.#started = false;
    this.#refresher.stopAll();
    await this.idle();
  }

  async resolve(ids?: readonly string[], options: ResolveOptions = {}): Promise<FeedSnapshot> {
    const known = new Set(this.#state.feeds.keys());
    const pending = new Map<string, Promise<void>>();
    // A feed whose params name another feed ($id) waits for that one first; a cycle is cut.
    const ensure = (id: string, path: ReadonlySet<string>): Promise<void> => {
      const record = this.#state.feeds.get(id);
      if (!record || path.has(id)) return Promise.resolve();
      let promise = pending.get(id);
      if (!promise) {
        const inner = new Set(path).add(id);
        const first = referencedFeeds(record.definition, known).map((other) =>
          ensure(other, inner),
        );
        promise = Promise.all(first).then(() => this.#refresher.ensure(id, options.step));
        pending.set(id, promise);
      }
      return promise;
    };
    await Promise.all((ids ?? [...known]).map((id) => ensure(id, new Set())));
    return this.snapshot(ids);
  }

  snapshot(ids?: readonly string[]): FeedSnapshot {
    return snapshotFeeds(this.#state, ids);
  }

  async add(definition: unknown, origin: FeedChangeOrigin = {}): Promise<FeedDefinition> {
    const parsed = feedDefinitionSchema.safeParse(definition);
    if (!parsed.success) throw invalid("the feed definition is invalid", parsed.error);
    const feed = parsed.data;
    this.#checkSource(feed);
    await this.#commit(
      "feed.added",
      () => {
        if (this.#state.feeds.has(feed.id)) {
          throw new FeedError("feed.duplicate", `a context feed "${feed.id}" already exists`, {
            hint: "Choose another id, or change that feed with update_context_feed",
            details: { feed_id: feed.id },
          });
        }
        const data = feed as unknown as Record<string, unknown>;
        return { feed_id: feed.id, definition: data, ...eventOrigin(origin) };
      },
      () => this.#defined(feed.id, feed as unknown as FeedChanges),
      origin.log,
    );
    return structuredClone(feed);
  }

  async update(
    update: unknown,
    origin: FeedChangeOrigin = {},
  ): Promise<{ definition: FeedDefinition; changes: FeedChanges }> {
    const parsed = feedUpdateSchema.safeParse(update);
    if (!parsed.success) throw invalid("the feed update is invalid", parsed.error);
    const id = parsed.data.id;
    if (Object.keys(parsed.data).length === 1) {
      throw new FeedError("feed.invalid", `the update of feed "${id}" names no field to change`, {
        hint: "Give at least one of type, interval, cache_ttl, max_tokens, source",
      });
    }
    let result: { definition: FeedDefinition; changes: FeedChanges } | undefined;
    await this.#commit(
      "feed.updated",
      () => {
        result = mergeFeedUpdate(this.#record(id).definition, parsed.data);
        if (Object.keys(result.changes).length === 0) return undefined;
        this.#checkSource(result.definition);
        return { feed_id: id, changes: result.changes, ...eventOrigin(origin) };
      },
      () => this.#defined(id, result!.changes),
      origin.log,
    );
    return structuredClone(result!);
  }

  async remove(id: string, origin: FeedChangeOrigin = {}): Promise<void> {
    await this.#commit(
      "feed.removed",
      () => {
        this.#record(id);
        return { feed_id: id, ...eventOrigin(origin) };
      },
      () => this.#refresher.forget(id),
      origin.log,
    );
  }

  definitions(): FeedDefinition[] {
    return [...this.#state.feeds.values()].map((record) => structuredClone(record.definition));
  }

  state(): FeedRegistryState {
    return cloneFeedState(this.#state);
  }

  async idle(): Promise<void> {
    await this.#refresher.idle();
    await this.#queue;
  }

  /** Makes the feeds the manifest owns match it (see `FeedEngineOptions.state`). */
  async #reconcile(feeds: readonly FeedDefinition[]): Promise<void> {
    const wanted = new Set(feeds.map((feed) => feed.id));
    for (const [id, record] of [...this.#state.feeds]) {
      if (record.owner === "manifest" && !wanted.has(id)) await this.remove(id, { by: "manifest" });
    }
    for (const feed of feeds) {
      const current = this.#state.feeds.get(feed.id);
      if (!current) {
        await this.add(feed, { by: "manifest" });
        continue;
      }
      const changes = diffDefinitions(current.definition, feed);
      if (Object.keys(changes).length === 0 && current.owner === "manifest") continue;
      await this.#commit(
        "feed.updated",
        () => ({ feed_id: feed.id, changes, by: "manifest" }),
        () => this.#defined(feed.id, changes),
      );
    }
  }

  /**
   * The follow-up of a recorded definition change: a new source abandons the refresh in flight
   * and forgets the step it served; a new type or interval reschedules; a periodic feed with a
   * new source, newly periodic, or without a value refreshes at once.
   */
  #defined(id: string, changes: FeedChanges): void {
    const sourceChanged = "source" in changes;
    const typeChanged = "type" in changes;
    if (sourceChanged) {
      this.#refresher.cancel(id);
      this.#refresher.forgetStep(id);
    }
    if (sourceChanged || typeChanged || "interval" in changes) this.#refresher.schedule(id);
    const record = this.#state.feeds.get(id);
    if (!this.#started || record?.definition.type !== "periodic") return;
    if (sourceChanged || typeChanged || record.value === undefined) {
      this.#refresher.background(id, "initial");
    }
  }

  #record(id: string) {
    const record = this.#state.feeds.get(id);
    if (!record) throw unknownFeedError(id, [...this.#state.feeds.keys()]);
    return record;
  }

  #checkSource(feed: FeedDefinition): void {
    if (feed.source.type !== "internal") return;
    prepareInternalSource(this.#deps.internalSources, feed.source, {
      feedId: feed.id,
      environment: this.#deps.environment,
    });
  }

  /**
   * Records one event and applies it, strictly one at a time. `prepare` runs when the event's
   * turn comes (so it sees every earlier change) and returns its data, or `undefined` to record
   * nothing; it may throw to refuse. `after` runs once the state has changed. `log` defaults to
   * the engine's.
   */
  #commit<T extends FeedEventType>(
    type: T,
    prepare: () => NewEventOf<T>["data"] | undefined,
    after?: () => void,
    log: FeedLog = this.#log,
  ): Promise<boolean> {
    const step = async () => {
      const data = prepare();
      if (data === undefined) return false;
      await log.record(type, data);
      const ts = new Date(this.#deps.clock.now()).toISOString();
      applyFeedEvent(this.#state, { type, data, ts });
      after?.();
      return true;
    };
    const result = this.#queue.then(step);
    this.#queue = result.catch(() => undefined);
    return result;
  }
}

type FeedManifest = NonNullable<FeedEngineOptions["manifest"]>;

function invalid(what: string, error: z.ZodError): FeedError {
  const issues = zodFeedIssues(error, []);
  return new FeedError("feed.invalid", `${what}: ${describeIssues(issues)}`, {
    details: { issues },
  });
}

function eventOrigin(origin: FeedChangeOrigin): { by: FeedOwner; action_id?: string } {
  return {
    by: origin.by ?? "runtime",
    ...(origin.actionId !== undefined ? { action_id: origin.actionId } : {}),
  };
}

function warn(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(describeError(error)), {
    code: "SPOOL_FEEDS",
  });
}
