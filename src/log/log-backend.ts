import { canonicalEvent, type PreparedEvent, type SpoolEvent } from "../spec/index.js";
import type { ArtifactStore } from "./artifact-store.js";
import type { ContinuityHead, Durability, EventQuery } from "./event-store.js";
import type { LeaseAcquisition, LeaseFence, LeaseRenewal, LeaseRow } from "./lease.js";
import { canonicalData } from "./stored-data.js";

/** How `LogBackend.write` writes one transaction beside its events and fences. */
export interface WriteOptions {
  /** The seq its first event must get: `store.seq-moved`, nothing written, when it would not. */
  expectFirst?: number;
}

/** A prepared event with its canonical text, ready for the backend to chain and write. */
export interface PendingEvent {
  event: PreparedEvent;
  /** Canonical JSON of `event.data`, stored as the data column. */
  dataJson: string;
  /** `canonicalEvent(event, dataJson)`: what the chain hash covers. */
  canonical: string;
}

/**
 * The canonical texts of `event`. Backends compute them as they link a batch, so a write can
 * hash one chunk while the engine stores the one before it.
 */
export function pendingEvent(event: PreparedEvent): PendingEvent {
  const dataJson = canonicalData(event);
  return { event, dataJson, canonical: canonicalEvent(event, dataJson) };
}

/** One page of a read: events in seq order and the head the read saw. */
export interface EventPage {
  events: SpoolEvent[];
  /** The committed head at the time of the read; every event ≤ it that matches has been seen once the read is complete. */
  head: number;
  /**
   * Characters of the events' data as stored, when the backend knows them: the store sizes its
   * next page by them, so a page of large events (a source's chunks) holds fewer of them.
   */
  chars?: number;
}

/**
 * What a storage engine implements for `EventStore`. Owned by the log layer; adapters live in
 * `sqlite/` and `postgres/`. The shared core does validation, batching, subscriptions and folds.
 */
export interface LogBackend {
  readonly kind: "sqlite" | "postgres";
  readonly location: string;
  /** What a committed write survives (see `EventStore.durability`). */
  readonly durability: Durability;
  readonly artifacts: ArtifactStore;
  /**
   * How many `write` calls may be in flight at once (default 1). More than one only where the
   * backend stores and resolves them in call order, whatever their timing.
   */
  readonly maxWritesInFlight?: number;
  /**
   * Writes events atomically and in order in one transaction: assigns seqs (commit order equals
   * seq order), links each continuity's hash chain, and resolves once committed durably.
   * With `fences`, first checks in the same transaction that each token is its continuity's
   * current lease token, and writes nothing (`store.lease-lost`) when one is not. With
   * `expectFirst`, checks under the same lock that the batch's first seq is that one, and writes
   * nothing (`store.seq-moved`) when it is not.
   */
  write(
    batch: readonly PreparedEvent[],
    fences?: readonly LeaseFence[],
    options?: WriteOptions,
  ): Promise<SpoolEvent[]>;
  /**
   * Grants the lease of `continuity` to `holder` unless someone holds it live at `now` (the
   * rule of `decideAcquire`), atomically with any other process's request.
   */
  acquireLease(
    continuity: string,
    holder: string,
    ttlMs: number,
    now: number,
  ): Promise<LeaseAcquisition>;
  /** Extends the lease while `token` is current (the rule of `decideRenew`). */
  renewLease(continuity: string, token: number, ttlMs: number, now: number): Promise<LeaseRenewal>;
  /** Releases the lease if `token` is current; true when it was. */
  releaseLease(continuity: string, token: number): Promise<boolean>;
  /** The stored lease row, or `undefined` when the continuity was never leased. */
  lease(continuity: string): Promise<LeaseRow | undefined>;
  /** Up to `limit` events matching `query` with `after < seq ≤ min(until, head)`, in seq order. */
  readPage(query: EventQuery, after: number, limit: number): Promise<EventPage>;
  head(): Promise<number>;
  /**
   * The committed head at once, for a backend that can read it without waiting (SQLite, on its
   * own thread); absent where only `head` can (PostgreSQL).
   */
  headNow?(): number;
  continuities(): Promise<ContinuityHead[]>;
  continuity(id: string): Promise<ContinuityHead | undefined>;
  /**
   * Calls `listener` with a head seq whenever another writer (another process or connection)
   * may have committed. In-process appends are signalled by the core. Returns an unsubscribe.
   */
  watch(listener: (head: number) => void): () => void;
  close(): Promise<void>;
}
