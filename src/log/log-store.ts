import {
  type EventDefaults,
  type NewEvent,
  prepareEvent,
  type SpoolEvent,
  StoreError,
  storedEvent,
} from "../spec/index.js";
import { AppendQueue } from "./append-queue.js";
import type {
  AppendBatchOptions,
  ContinuityHead,
  Durability,
  EventQuery,
  EventStore,
  Projection,
  ReadAhead,
  ReadQuery,
  SubscribeOptions,
  SubscriptionMessage,
} from "./event-store.js";
import { HeadSignal } from "./head-signal.js";
import {
  checkLeaseArgs,
  type LeaseAcquisition,
  type LeaseFence,
  type LeaseInfo,
  type LeaseRenewal,
} from "./lease.js";
import type { EventPage, LogBackend } from "./log-backend.js";
import { monotonicUlids } from "./monotonic-ulid.js";
import { RecentTail } from "./recent-tail.js";
import { canonicalData, withStoredData } from "./stored-data.js";

/**
 * About how many characters of stored data one page of a read holds: pages of large events get
 * fewer events, so the memory of a read is bounded whatever the events' size.
 */
const PAGE_CHARS = 8 * 1024 * 1024;

/** Tuning shared by both adapters. */
export interface LogStoreOptions {
  /** Droppable events wait at most this long to be batched (default 50 ms). */
  droppableDelayMs?: number;
  /** Most events per transaction under load (default 5,000). */
  maxBatch?: number;
  /** Events per page when reading and catching up (default 1,000). */
  pageSize?: number;
  /** Clock and id source for events that do not bring their own (tests inject these). */
  defaults?: Partial<EventDefaults>;
  /**
   * The clock leases are granted, renewed and judged live by, in ms since the epoch (default
   * `Date.now`). Processes sharing a store must agree on it to well within a lease's time to
   * live (machines kept in sync by NTP do); tests inject one to expire leases without waiting.
   */
  leaseClock?: () => number;
}

/** Builds the `EventStore` every adapter shares on top of its `LogBackend`. */
export function createEventStore(backend: LogBackend, options: LogStoreOptions = {}): EventStore {
  return new LogStore(backend, options);
}

class LogStore implements EventStore {
  readonly kind: "sqlite" | "postgres";
  readonly location: string;
  readonly durability: Durability;
  readonly #backend: LogBackend;
  readonly #queue: AppendQueue;
  readonly #signal = new HeadSignal();
  readonly #defaults: EventDefaults;
  readonly #pageSize: number;
  readonly #leaseClock: () => number;
  /** The lease token this store's appends to each continuity carry (see `acquireLease`). */
  readonly #fences = new Map<string, number>();
  /** Appends refused before they were queued (closed store, invalid event), and why. */
  readonly #refused = new WeakMap<Promise<unknown>, unknown>();
  /** What this store wrote recently: a thread's catch-up before each step reads it from here. */
  readonly #tail = new RecentTail();
  #watchers = 0;
  #unwatch: (() => void) | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(backend: LogBackend, options: LogStoreOptions) {
    this.#backend = backend;
    this.kind = backend.kind;
    this.location = backend.location;
    this.durability = backend.durability;
    this.#pageSize = options.pageSize ?? 1000;
    this.#leaseClock = options.leaseClock ?? Date.now;
    const newUlid = monotonicUlids();
    this.#defaults = {
      now: options.defaults?.now ?? isoClock(),
      newId: options.defaults?.newId ?? (() => newUlid()),
    };
    this.#queue = new AppendQueue(
      async (batch, fences, options) => {
        const stored = await backend.write(batch, fences, options);
        this.#tail.stored(stored);
        const last = stored.at(-1);
        if (last) this.#signal.advance(last.seq);
        return stored;
      },
      {
        droppableDelayMs: options.droppableDelayMs ?? 50,
        maxBatch: options.maxBatch ?? 5000,
        maxInFlight: backend.maxWritesInFlight ?? 1,
      },
    );
  }

  get artifacts() {
    return this.#backend.artifacts;
  }

  append(event: NewEvent): Promise<SpoolEvent> {
    // Not through #submit: this runs for every streamed delta, and a closure per call shows.
    if (this.#closed) return this.#refuse(closedError());
    try {
      const prepared = prepareEvent(event, this.#defaults);
      if (this.#fences.size === 0) return this.#queue.enqueueOne(prepared);
      const token = this.#fences.get(prepared.continuity);
      return this.#queue.enqueueOne(
        prepared,
        token === undefined ? undefined : { continuity: prepared.continuity, token },
      );
    } catch (error) {
      return this.#refuse(error);
    }
  }

  appendBatch(events: readonly NewEvent[], options?: AppendBatchOptions): Promise<SpoolEvent[]> {
    if (events.length === 0) return Promise.resolve([]);
    // An append it must follow was refused before it reached the queue: so is this one.
    for (const before of options?.after ?? []) {
      if (this.#refused.has(before)) return this.#refuse(this.#refused.get(before));
    }
    // Every event is validated before any is queued: one bad event and nothing is written.
    return this.#submit(() => {
      const prepared = events.map((event) => prepareEvent(event, this.#defaults));
      return this.#queue.enqueue(prepared, this.#fencesOf(prepared), options);
    });
  }

  /** The fences of a batch: one per leased continuity it appends to. */
  #fencesOf(events: readonly { continuity: string }[]): LeaseFence[] | undefined {
    if (this.#fences.size === 0) return undefined;
    const fences: LeaseFence[] = [];
    for (const continuity of new Set(events.map((event) => event.continuity))) {
      const token = this.#fences.get(continuity);
      if (token !== undefined) fences.push({ continuity, token });
    }
    return fences.length > 0 ? fences : undefined;
  }

  async acquireLease(continuity: string, holder: string, ttlMs: number): Promise<LeaseAcquisition> {
    if (this.#closed) throw closedError();
    checkLeaseArgs(continuity, ttlMs, holder);
    const result = await this.#backend.acquireLease(continuity, holder, ttlMs, this.#leaseClock());
    if (result.status === "granted") this.#fences.set(continuity, result.token);
    return result;
  }

  async renewLease(continuity: string, token: number, ttlMs: number): Promise<LeaseRenewal> {
    if (this.#closed) throw closedError();
    checkLeaseArgs(continuity, ttlMs);
    return this.#backend.renewLease(continuity, token, ttlMs, this.#leaseClock());
  }

  async releaseLease(continuity: string, token: number): Promise<void> {
    if (this.#closed) throw closedError();
    checkLeaseArgs(continuity, 1);
    // Appends made under the lease are written first, while its token is still current.
    await this.#queue.drain();
    await this.#backend.releaseLease(continuity, token);
    if (this.#fences.get(continuity) === token) this.#fences.delete(continuity);
  }

  async lease(continuity: string): Promise<(LeaseInfo & { live: boolean }) | undefined> {
    const row = await this.#backend.lease(continuity);
    if (!row) return undefined;
    return {
      continuity,
      holder: row.holder ?? undefined,
      token: row.token,
      expiresAt: row.expiresAt,
      live: row.holder !== null && row.expiresAt > this.#leaseClock(),
    };
  }

  /** Queues through `enqueue`, turning a closed store or a validation error into a rejection. */
  #submit<T>(enqueue: () => Promise<T>): Promise<T> {
    if (this.#closed) return this.#refuse(closedError());
    try {
      return enqueue();
    } catch (error) {
      return this.#refuse(error);
    }
  }

  /** A rejected append, remembered so that a batch appended `after` it is refused too. */
  #refuse<T>(error: unknown): Promise<T> {
    const refused = Promise.reject(error);
    this.#refused.set(refused, error);
    return refused;
  }

  flush(): Promise<void> {
    return this.#queue.drain();
  }

  async *read(query: ReadQuery = {}): AsyncIterable<SpoolEvent> {
    let after = query.after ?? 0;
    let remaining = query.limit ?? Number.POSITIVE_INFINITY;
    // The head only when it is needed: a read the tail may answer, or one without `until`.
    const head =
      RecentTail.mayAnswer(query) || query.until === undefined
        ? await this.#backend.head()
        : undefined;
    const recent = head === undefined ? undefined : this.#tail.answer(query, head);
    if (recent) {
      yield* recent;
      return;
    }
    const until = query.until ?? head!;
    let want = Math.min(this.#pageSize, remaining);
    while (remaining > 0 && after < until) {
      const page = await this.#backend.readPage({ ...query, until }, after, want);
      for (const event of page.events) yield event;
      remaining -= page.events.length;
      if (page.events.length < want) break;
      after = page.events.at(-1)!.seq;
      want = Math.min(this.#nextPage(page), remaining);
    }
  }

  readRecent(continuity: string, after: number): readonly SpoolEvent[] | undefined {
    if (this.#closed) return undefined;
    const head = this.#backend.headNow?.();
    return head === undefined ? undefined : this.#tail.answer({ continuity, after }, head);
  }

  readAhead(continuity: string, after: number): ReadAhead | undefined {
    if (this.#closed) return undefined;
    // Only where the head can be read at once (SQLite) does the tail keep up with the log. The
    // head itself is not read: another writer's commit makes the prediction fail when checked.
    if (!this.#backend.headNow) return undefined;
    const written = this.#tail.since(continuity, after);
    if (!written) return undefined;
    const ahead = this.#queue.predict(this.#tail.known);
    const events = [...written];
    for (const { event, seq } of ahead.events) {
      if (event.continuity !== continuity || seq <= after) continue;
      // As a read will give it once written; its chain hash is not linked yet. Its write takes
      // the same canonical JSON, when this made it.
      events.push(withStoredData(storedEvent(event, seq, ""), () => canonicalData(event, true)));
    }
    return { events, prediction: ahead.prediction };
  }

  async fold<State>(query: EventQuery, projection: Projection<State>): Promise<State> {
    let state =
      typeof projection.initial === "function"
        ? (projection.initial as () => State)()
        : projection.initial;
    let after = query.after ?? 0;
    const until = query.until ?? (await this.#backend.head());
    let want = this.#pageSize;
    while (after < until) {
      const page = await this.#backend.readPage({ ...query, until }, after, want);
      for (const event of page.events) state = projection.reduce(state, event);
      if (page.events.length < want) break;
      after = page.events.at(-1)!.seq;
      want = this.#nextPage(page);
    }
    return state;
  }

  async *subscribe(options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    if (this.#closed) return;
    const { signal, ...query } = options;
    let cursor = query.after ?? 0;
    let caughtUp = false;
    let want = this.#pageSize;
    this.#watch();
    try {
      while (!this.#closed && !signal?.aborted) {
        const page = await this.#readOrEnd(query, cursor, want);
        if (!page) return;
        this.#signal.advance(page.head);
        for (const event of page.events) {
          yield { type: "event", event };
          cursor = event.seq;
        }
        const full = page.events.length === want;
        want = this.#nextPage(page);
        if (full) continue;
        // Everything matching up to the head this read saw has been delivered.
        cursor = Math.max(cursor, page.head);
        if (!caughtUp) {
          caughtUp = true;
          yield { type: "up-to-date", seq: cursor };
        }
        if (!(await this.#signal.wait(cursor, signal))) return;
      }
    } finally {
      this.#unwatchOne();
    }
  }

  /**
   * The size of the page after `page`: the store's page size, or fewer events when `page`'s were
   * large, so a page holds about `PAGE_CHARS` of data (a page of a source's 64 KiB chunks is not
   * 1,000 of them at once); one event at least.
   */
  #nextPage(page: EventPage): number {
    const { chars } = page;
    if (chars === undefined || page.events.length === 0) return this.#pageSize;
    const fit = Math.floor((PAGE_CHARS * page.events.length) / Math.max(1, chars));
    return Math.max(1, Math.min(this.#pageSize, fit));
  }

  async #readOrEnd(query: EventQuery, cursor: number, want: number) {
    try {
      return await this.#backend.readPage(query, cursor, want);
    } catch (error) {
      if (this.#closed) return undefined;
      throw error;
    }
  }

  #watch(): void {
    this.#watchers += 1;
    if (this.#watchers === 1)
      this.#unwatch = this.#backend.watch((head) => this.#signal.advance(head));
  }

  #unwatchOne(): void {
    this.#watchers -= 1;
    if (this.#watchers === 0) {
      this.#unwatch?.();
      this.#unwatch = undefined;
    }
  }

  head(): Promise<number> {
    return this.#backend.head();
  }

  continuities(): Promise<ContinuityHead[]> {
    return this.#backend.continuities();
  }

  continuity(id: string): Promise<ContinuityHead | undefined> {
    return this.#backend.continuity(id);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        await this.#queue.drain();
      } finally {
        this.#closed = true;
        this.#tail.clear();
        this.#signal.release();
        this.#unwatch?.();
        await this.#backend.close();
      }
    })();
    return this.#closing;
  }
}

/** `new Date().toISOString()`, formatted once per millisecond rather than once per event. */
function isoClock(): () => string {
  let lastMs = -1;
  let lastIso = "";
  return () => {
    const ms = Date.now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastIso = new Date(ms).toISOString();
    }
    return lastIso;
  };
}

function closedError(): StoreError {
  return new StoreError("store.closed", "the event store is closed", {
    hint: "Open the store again before appending",
  });
}
