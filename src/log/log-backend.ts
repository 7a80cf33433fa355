import type { PreparedEvent, SpoolEvent } from "../spec/index.js";
import type { ArtifactStore } from "./artifact-store.js";
import type { ContinuityHead, EventQuery } from "./event-store.js";

/** A prepared event with its canonical text, ready for the backend to chain and write. */
export interface PendingEvent {
  event: PreparedEvent;
  /** Canonical JSON of `event.data`, stored as the data column. */
  dataJson: string;
  /** `canonicalEvent(event, dataJson)`: what the chain hash covers. */
  canonical: string;
}

/** One page of a read: events in seq order and the head the read saw. */
export interface EventPage {
  events: SpoolEvent[];
  /** The committed head at the time of the read; every event ≤ it that matches has been seen once the read is complete. */
  head: number;
}

/**
 * What a storage engine implements for `EventStore`. Owned by the log layer; adapters live in
 * `sqlite/` and `postgres/`. The shared core does validation, batching, subscriptions and folds.
 */
export interface LogBackend {
  readonly kind: "sqlite" | "postgres";
  readonly location: string;
  readonly artifacts: ArtifactStore;
  /**
   * Writes events atomically and in order in one transaction: assigns seqs (commit order equals
   * seq order), links each continuity's hash chain, and resolves once committed durably.
   */
  write(batch: readonly PendingEvent[]): Promise<SpoolEvent[]>;
  /** Up to `limit` events matching `query` with `after < seq ≤ min(until, head)`, in seq order. */
  readPage(query: EventQuery, after: number, limit: number): Promise<EventPage>;
  head(): Promise<number>;
  continuities(): Promise<ContinuityHead[]>;
  continuity(id: string): Promise<ContinuityHead | undefined>;
  /**
   * Calls `listener` with a head seq whenever another writer (another process or connection)
   * may have committed. In-process appends are signalled by the core. Returns an unsubscribe.
   */
  watch(listener: (head: number) => void): () => void;
  close(): Promise<void>;
}
