import { describeError, type EventData, type NewEventOf, SpoolError } from "../spec/index.js";
import type { FeedDefinition } from "./feed-definition.js";
import { FeedError } from "./feed-error.js";
import type { FeedEventType } from "./feed-log.js";
import { withFeedReferences } from "./feed-references.js";
import { snapshotFeeds } from "./feed-snapshot.js";
import type { FeedFailure, FeedRegistryState } from "./feed-state.js";
import { readFeedSource, type SourceDependencies } from "./read-feed-source.js";
import { renderValue } from "./render-value.js";
import { truncateToTokens } from "./truncate-value.js";

/** What asked for a refresh, as `feed.refreshed` and `feed.failed` record it. */
export type RefreshTrigger = EventData<"feed.refreshed">["trigger"];

/** What the refresher needs from the engine that owns it. */
export interface RefresherHost {
  readonly deps: SourceDependencies;
  readonly defaultMaxTokens: number;
  /** Where failures of background refreshes (the log could not record) go. */
  readonly onError: (error: unknown) => void;
  /** The live registry (read only here: it changes through `commit`). */
  readonly state: FeedRegistryState;
  /** True between `start()` and `stop()`: only then do timers run. */
  started(): boolean;
  /** Records one event in the engine's order (see `LiveFeedEngine`); `undefined` records nothing. */
  commit<T extends FeedEventType>(
    type: T,
    prepare: () => NewEventOf<T>["data"] | undefined,
  ): Promise<boolean>;
}

interface FeedRuntime {
  /** Changes whenever a refresh in flight must be abandoned; a result of another is dropped. */
  generation: number;
  timer?: unknown;
  inFlight?: Promise<void>;
  cancel?: AbortController;
  /** The step an on_demand feed without cache_ttl was last fetched for. */
  lastStep?: string | undefined;
}

let generations = 0;
const MAX_MESSAGE = 2000;

/**
 * The moving parts of the feeds: one interval timer per periodic feed, at most one refresh in
 * flight per feed, and the fetch-or-reuse decision of `resolve`.
 *
 * Contract: a refresh reads the source, then records `feed.refreshed` (value cut to
 * `max_tokens`) or `feed.failed` through `host.commit`, unless by then it was abandoned (its feed
 * removed, its source changed, the engine stopped). A periodic tick that brings the value it
 * already has, or the failure it already has, records nothing. A refresh promise rejects only
 * when the log fails.
 */
export class FeedRefresher {
  readonly #host: RefresherHost;
  readonly #runtimes = new Map<string, FeedRuntime>();
  readonly #tasks = new Set<Promise<void>>();

  constructor(host: RefresherHost) {
    this.#host = host;
  }

  /** (Re)starts the interval timer of `id` when it is periodic and the engine started. */
  schedule(id: string): void {
    this.unschedule(id);
    const record = this.#host.state.feeds.get(id);
    if (!this.#host.started() || record?.definition.type !== "periodic") return;
    const seconds = record.definition.interval!;
    this.#runtime(id).timer = this.#host.deps.timers.setInterval(() => {
      if (this.#runtime(id).inFlight === undefined) this.background(id, "periodic");
    }, seconds * 1000);
  }

  unschedule(id: string): void {
    const runtime = this.#runtimes.get(id);
    if (runtime?.timer === undefined) return;
    this.#host.deps.timers.clearInterval(runtime.timer);
    delete runtime.timer;
  }

  /** Abandons the refresh in flight (nothing will be recorded for it; a new one may start). */
  cancel(id: string): void {
    const runtime = this.#runtimes.get(id);
    if (!runtime) return;
    runtime.generation = ++generations;
    runtime.cancel?.abort(
      new FeedError("feed.cancelled", `the refresh of feed "${id}" was abandoned`),
    );
    delete runtime.cancel;
    delete runtime.inFlight;
  }

  /** After a source change: the next step fetches again, whatever step it is. */
  forgetStep(id: string): void {
    this.#runtime(id).lastStep = undefined;
  }

  /** Stops everything about `id` (it was removed). */
  forget(id: string): void {
    this.unschedule(id);
    this.cancel(id);
    this.#runtimes.delete(id);
  }

  /** Clears every timer and abandons every refresh in flight. */
  stopAll(): void {
    for (const id of this.#runtimes.keys()) {
      this.unschedule(id);
      this.cancel(id);
    }
  }

  /** Resolves when no refresh is in flight. */
  async idle(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  /** A refresh nobody waits for; a log failure goes to `host.onError`. */
  background(id: string, trigger: RefreshTrigger): void {
    this.refresh(id, trigger).catch(this.#host.onError);
  }

  /**
   * What `resolve` does for one feed: a periodic feed is refreshed only when it has neither a
   * value nor a failure yet; an on_demand feed is reused within `cache_ttl` of its value, or,
   * without one, when already fetched for `step`; otherwise it is fetched (sharing a fetch in
   * flight).
   */
  ensure(id: string, step: string | undefined): Promise<void> {
    const record = this.#host.state.feeds.get(id);
    if (!record) return Promise.resolve();
    const runtime = this.#runtime(id);
    if (record.definition.type === "periodic") {
      if (record.value !== undefined || record.error !== undefined) return Promise.resolve();
      return this.refresh(id, "initial");
    }
    if (runtime.inFlight !== undefined) return runtime.inFlight;
    const ttl = record.definition.cache_ttl;
    if (ttl !== undefined) {
      const at = record.refreshedAt === undefined ? Number.NaN : Date.parse(record.refreshedAt);
      if (this.#host.deps.clock.now() - at < ttl * 1000) return Promise.resolve();
    } else if (step !== undefined && runtime.lastStep === step) {
      return Promise.resolve();
    }
    runtime.lastStep = step;
    return this.refresh(id, "on_demand");
  }

  /** One refresh of `id`, or the one already in flight. */
  refresh(id: string, trigger: RefreshTrigger): Promise<void> {
    const runtime = this.#runtime(id);
    if (runtime.inFlight !== undefined) return runtime.inFlight;
    const record = this.#host.state.feeds.get(id);
    if (!record) return Promise.resolve();
    const generation = runtime.generation;
    const cancel = new AbortController();
    const current = () =>
      this.#runtimes.get(id) === runtime &&
      runtime.generation === generation &&
      !cancel.signal.aborted &&
      this.#host.state.feeds.has(id);
    const definition = withFeedReferences(record.definition, snapshotFeeds(this.#host.state));
    const task = this.#run(id, definition, trigger, cancel.signal, current).finally(() => {
      this.#tasks.delete(task);
      if (runtime.inFlight === task) {
        delete runtime.inFlight;
        delete runtime.cancel;
      }
    });
    runtime.inFlight = task;
    runtime.cancel = cancel;
    this.#tasks.add(task);
    return task;
  }

  async #run(
    id: string,
    definition: FeedDefinition,
    trigger: RefreshTrigger,
    signal: AbortSignal,
    current: () => boolean,
  ): Promise<void> {
    const { deps, state } = this.#host;
    const started = deps.clock.now();
    let text: string | undefined;
    let failure: FeedFailure | undefined;
    try {
      text = renderValue(await readFeedSource(definition, deps, signal));
    } catch (error) {
      failure = toFailure(error);
    }
    const duration_ms = Math.max(0, deps.clock.now() - started);
    if (failure) {
      const error = failure;
      await this.#host.commit("feed.failed", () => {
        if (!current()) return undefined;
        const last = state.feeds.get(id)!.error;
        const repeated = last?.code === error.code && last.message === error.message;
        if (trigger === "periodic" && repeated) return undefined;
        return { feed_id: id, error, duration_ms, trigger };
      });
      return;
    }
    await this.#host.commit("feed.refreshed", () => {
      if (!current()) return undefined;
      const latest = state.feeds.get(id)!;
      const cut = truncateToTokens(
        text ?? "",
        latest.definition.max_tokens ?? this.#host.defaultMaxTokens,
      );
      const unchanged = latest.error === undefined && latest.value === cut.value;
      if (trigger === "periodic" && unchanged) return undefined;
      return {
        feed_id: id,
        value: cut.value,
        truncated: cut.truncated,
        tokens: cut.tokens,
        duration_ms,
        trigger,
      };
    });
  }

  #runtime(id: string): FeedRuntime {
    let runtime = this.#runtimes.get(id);
    if (!runtime) {
      runtime = { generation: ++generations };
      this.#runtimes.set(id, runtime);
    }
    return runtime;
  }
}

/** A failure as `feed.failed` logs it: a `SpoolError` keeps its code; the message is capped. */
function toFailure(error: unknown): FeedFailure {
  const message = describeError(error);
  const short = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
  if (error instanceof SpoolError) {
    return { code: error.code, message: short, ...(error.retryable ? { retryable: true } : {}) };
  }
  return { code: "feed.source-failed", message: short };
}
