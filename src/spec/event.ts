/** The kinds of stream an event can belong to inside a continuity. */
export const STREAM_KINDS = ["continuity", "thread", "step", "task", "source", "worker"] as const;

/** What a stream is: the continuity itself, one of its threads, steps, tasks, sources or workers. */
export type StreamKind = (typeof STREAM_KINDS)[number];

/** Names one stream inside a continuity. */
export interface StreamRef {
  kind: StreamKind;
  id: string;
}

/**
 * `critical`: durable before anyone acts on it; its append resolves only after commit.
 * `droppable`: batched and possibly coalesced with its neighbours (token deltas); never reordered
 * relative to critical events.
 */
export type Criticality = "critical" | "droppable";

/**
 * One event of the log, as stored and read back. The envelope is the same for every type; `data`
 * is what the catalog's schema for `type` accepted.
 */
export interface SpoolEvent<Data = unknown> {
  /** Position in the store's log: strictly increasing, without holes a reader can observe. */
  seq: number;
  /** ULID, unique across stores. */
  id: string;
  continuity: string;
  stream: StreamRef;
  /** Dotted `<noun>.<verb-past>` name from the event catalog. */
  type: string;
  /** ISO-8601 time the event was made. */
  ts: string;
  /** Who caused it; required on inputs (`turn.added`), `null` where the runtime acted on its own. */
  actor: string | null;
  /** Where the input came from (`cli`, `http`, `source:…`); `null` where not an input. */
  origin: string | null;
  criticality: Criticality;
  data: Data;
  /** sha256 over the previous hash of this continuity and this event's canonical form (hex). */
  hash: string;
}

export { GENESIS_HASH } from "./chain-link.js";

/** What a caller hands to `append`; the store fills in `seq`, `hash`, and defaults. */
export interface NewEvent<Data = unknown> {
  continuity: string;
  type: string;
  data: Data;
  /** Defaults to the continuity's own stream. */
  stream?: StreamRef;
  actor?: string | null;
  origin?: string | null;
  /** Defaults to the store clock. */
  ts?: string;
  /** Defaults to a fresh monotonic ULID. */
  id?: string;
}

/** An event validated against the catalog, not yet positioned in the log (no `seq`, no `hash`). */
export type PreparedEvent = Omit<SpoolEvent, "seq" | "hash">;

/**
 * `event` as stored at `seq` with chain hash `hash`. Written out field by field rather than
 * spread: a store builds one per appended event, and the literal is several times faster.
 */
export function storedEvent(event: PreparedEvent, seq: number, hash: string): SpoolEvent {
  return {
    seq,
    id: event.id,
    continuity: event.continuity,
    stream: event.stream,
    type: event.type,
    ts: event.ts,
    actor: event.actor,
    origin: event.origin,
    criticality: event.criticality,
    data: event.data,
    hash,
  };
}
