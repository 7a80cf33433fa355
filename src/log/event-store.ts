import type { AnyNewEvent, NewEvent, SpoolEvent, StreamRef } from "../spec/index.js";
import type { ArtifactStore } from "./artifact-store.js";
import type { LeaseAcquisition, LeaseInfo, LeaseRenewal } from "./lease.js";
import type { SeqPrediction } from "./seq-prediction.js";

/**
 * How much a resolved append survives:
 * - `strict` (default): survives a killed process and a power cut. SQLite syncs the WAL at every
 *   commit (`synchronous=FULL`); PostgreSQL keeps the server's `synchronous_commit`, raised to
 *   `local` where the server turned it off.
 * - `fast`: survives a killed process; a power cut may lose the last commits, and the log stays
 *   consistent (a prefix of it survives). SQLite `synchronous=NORMAL`; PostgreSQL
 *   `synchronous_commit=off`.
 */
export type Durability = "strict" | "fast";

/** Which events a read or a subscription covers. All fields narrow; none means the whole log. */
export interface EventQuery {
  continuity?: string;
  /** One stream inside the continuity (or across continuities when `continuity` is absent). */
  stream?: StreamRef;
  /** Only these event types (an empty list matches nothing). */
  types?: readonly string[];
  /** Start after this seq (exclusive). Default 0: from the beginning. */
  after?: number;
  /** Stop at this seq (inclusive). Default: the head when the read began. */
  until?: number;
}

/** A read that stops after `limit` events. */
export interface ReadQuery extends EventQuery {
  limit?: number;
}

/** What a subscription yields: events in seq order, and one marker when it has caught up. */
export type SubscriptionMessage =
  | { type: "event"; event: SpoolEvent }
  | {
      /** Everything up to `seq` has been delivered; what follows is live. Sent exactly once. */
      type: "up-to-date";
      seq: number;
    };

/** Options of `EventStore.subscribe`. */
export interface SubscribeOptions extends Omit<EventQuery, "until"> {
  /** Ends the subscription (the iterator finishes normally). */
  signal?: AbortSignal;
}

/** One row of `EventStore.continuities()`: a continuity's head. */
export interface ContinuityHead {
  continuity: string;
  /** Number of events in the continuity. */
  events: number;
  firstSeq: number;
  lastSeq: number;
  createdAt: string;
  lastAt: string;
  /** The hash of its newest event: the head of its chain. */
  headHash: string;
}

/** A pure projection of events into state: `fold` runs it over a read. */
export interface Projection<State> {
  initial: State | (() => State);
  /** Must not mutate events; may mutate and return `state` for speed. */
  reduce(state: State, event: SpoolEvent): State;
}

/** What `EventStore.readAhead` gives. */
export interface ReadAhead {
  /** The continuity's events after the seq asked for: written ones, then queued ones. */
  events: readonly SpoolEvent[];
  /** What a batch built from those seqs is appended with (`AppendBatchOptions.predicted`). */
  prediction: SeqPrediction;
}

/** Options of `EventStore.appendBatch`. */
export interface AppendBatchOptions {
  /**
   * Earlier appends of this store (the promises `append` or `appendBatch` returned) the batch
   * must follow: it is written only once each of them is, before it or in its transaction, and
   * fails, with nothing of it written, when one of them failed (or was refused before it was
   * queued). So a caller need not wait for an event to be durable before appending what must
   * never stand in the log without it: both may share one commit.
   */
  after?: readonly Promise<unknown>[];
  /**
   * A prediction from `readAhead`: the batch is written only if every append queued when it was
   * made got the seq it predicted (so what was built from those seqs is true); otherwise the
   * batch fails with `StoreError` `store.seq-moved` and nothing of it is written.
   */
  predicted?: SeqPrediction;
  /**
   * Nothing waits for this batch's intent (`step.started`, `action.dispatched`): it is written
   * with the turn's other critical appends, at the end of the event loop's turn, instead of at
   * the next microtask. For an intent whose effect runs ahead of it (a pure call): it then shares
   * a commit with what follows it.
   */
  unhurried?: boolean;
}

/**
 * The continuity log: append-only, totally ordered by `seq`, one hash chain per continuity.
 *
 * Contract:
 * - `append` and `appendBatch` validate against the event catalog first; an invalid event rejects
 *   with `EventValidationError` and nothing of that call is written.
 * - Appends are group-committed. A critical event's promise resolves only once it is durable (as
 *   the store's `durability` defines it). Droppable events are batched for up to
 *   `droppableDelayMs` and adjacent ones of one stream may coalesce into one stored event; a
 *   critical append flushes every event appended before it, so order is exactly append order.
 * - `seq` increases strictly with no holes a reader can observe, also across crashes and with
 *   several writing processes.
 * - `read` and `subscribe` never throw mid-stream for reasons of their own making; a storage
 *   failure surfaces as a `StoreError` from the iterator.
 */
export interface EventStore {
  /** `sqlite` or `postgres`. */
  readonly kind: "sqlite" | "postgres";
  /** Where the store lives, with any password removed: safe to print. */
  readonly location: string;
  /**
   * What a resolved critical append has survived: `strict`, a power cut; `fast`, a killed
   * process. Absent (a store in memory, replay's): neither is promised, and code that trades on
   * it (a model call made while its step's start is being written, only on `fast`) waits.
   */
  readonly durability?: Durability;
  /**
   * True for a store that may hold an append's answer until an input from outside the log is
   * re-enacted there (replay's verifying store holds one until a cancel is issued). Code that
   * queues an event and decides without waiting for it (a step's `message.completed`, before the
   * loop's decision) waits for its answer on such a store, so that the input lands where it did.
   */
  readonly holdsAnswers?: boolean;
  /** Content-addressed blobs in the same backend. */
  readonly artifacts: ArtifactStore;

  /** Appends one event; resolves with it as stored (a coalesced droppable resolves with the merged event). */
  append(event: AnyNewEvent | NewEvent): Promise<SpoolEvent>;
  /** Appends events atomically, in order, in one transaction: all are written or none. */
  appendBatch(
    events: readonly (AnyNewEvent | NewEvent)[],
    options?: AppendBatchOptions,
  ): Promise<SpoolEvent[]>;
  /** Writes everything pending (droppable events included) and waits for it. */
  flush(): Promise<void>;

  /** Events matching `query` in seq order, read in pages (no whole-log loads). */
  read(query?: ReadQuery): AsyncIterable<SpoolEvent>;
  /**
   * What `read({ continuity, after })` gives, at once, when the store can answer it from what it
   * wrote itself with nothing committed since by anyone (a thread catching up before its next
   * step); `undefined` when only `read` can answer. Optional: a store without it is read.
   */
  readRecent?(continuity: string, after: number): readonly SpoolEvent[] | undefined;
  /**
   * Like `readRecent`, and with the events of `continuity` this store has queued and not yet
   * written, each with the seq it will get if nothing else is written first (an empty `hash`:
   * not linked yet). `undefined` when it cannot say (see `readRecent`).
   * Whatever is appended from those seqs must carry `prediction` (`AppendBatchOptions.predicted`).
   */
  readAhead?(continuity: string, after: number): ReadAhead | undefined;
  /** Folds `projection` over the events matching `query`. */
  fold<State>(query: EventQuery, projection: Projection<State>): Promise<State>;
  /**
   * Catches up from `after`, sends one `up-to-date` marker, then follows live. Never skips or
   * repeats an event, also when appends race the switch to live. Stop with `signal`, `break`, or
   * `close()`.
   */
  subscribe(options?: SubscribeOptions): AsyncIterable<SubscriptionMessage>;

  /** The highest committed seq (0 for an empty log). */
  head(): Promise<number>;
  /** Every continuity's head, oldest first. */
  continuities(): Promise<ContinuityHead[]>;
  /** One continuity's head, or `undefined` when it has no events. */
  continuity(id: string): Promise<ContinuityHead | undefined>;

  /**
   * Takes the lease of `continuity` for `holder` for `ttlMs` unless another holder's lease is
   * live: `granted` with a fencing token (strictly greater than every earlier token of the
   * continuity), or `held` with who holds it until when. Atomic across processes and connections.
   *
   * Once granted, every later append of this store to `continuity` carries the token: the store
   * refuses it (`StoreError` `store.lease-lost`, nothing of its transaction written) unless the
   * token is still the current one, checked in the append's own transaction. Appends to other
   * continuities, and appends by stores holding no lease on it, are never fenced.
   */
  acquireLease(continuity: string, holder: string, ttlMs: number): Promise<LeaseAcquisition>;
  /**
   * Extends the lease by `ttlMs` from now while `token` is current (also after it lapsed, if
   * nobody was granted it since): `granted`, or `lost` with who holds it now. A lost token keeps
   * fencing this store's appends, so they are refused.
   */
  renewLease(continuity: string, token: number, ttlMs: number): Promise<LeaseRenewal>;
  /**
   * Releases the lease (so another process may take it at once) if `token` is current, and stops
   * fencing this store's appends to `continuity`. Never fails for a token that is no longer current.
   */
  releaseLease(continuity: string, token: number): Promise<void>;
  /** The continuity's lease, or `undefined` when it was never leased; read-only. */
  lease(continuity: string): Promise<(LeaseInfo & { live: boolean }) | undefined>;

  /** Flushes, ends subscriptions and releases the database. Idempotent. */
  close(): Promise<void>;
}

/**
 * Whether an effect may start before its intent is written on `store`: only where a resolved
 * append guards against a killed process alone (`fast`), so an effect a kill could repeat costs
 * no more than that, and never on a store that holds answers (replay's). A step's model call and
 * a pure tool trade on it.
 */
export function effectsMayLead(store: Pick<EventStore, "durability" | "holdsAnswers">): boolean {
  return store.durability === "fast" && !store.holdsAnswers;
}
