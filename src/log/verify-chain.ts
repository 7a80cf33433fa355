import {
  canonicalEvent,
  chainHash,
  GENESIS_HASH,
  type SpoolEvent,
  StoreError,
} from "../spec/index.js";
import type { EventStore, ReadQuery } from "./event-store.js";

/** The first place a chain stops checking out. */
export interface ChainMismatch {
  continuity: string;
  /** The event whose stored hash is wrong; absent when the head record disagrees with the log's end. */
  seq?: number;
  id?: string;
  expected: string;
  actual: string;
  reason: string;
}

/** What `verifyChain` found. */
export interface ChainReport {
  ok: boolean;
  continuities: number;
  events: number;
  /** The first mismatch in seq order; verification stops there. */
  mismatch?: ChainMismatch;
  /**
   * Where the store's file stopped being readable (a damaged SQLite page): `events` then counts
   * the events before it, every one of which checked out; the rest could not be read.
   */
  damage?: ChainDamage;
}

/** Where a damaged store stops being readable, and what the store said. */
export interface ChainDamage {
  /** The last event read whole (0: none); the damage lies after it. */
  afterSeq: number;
  /** The store's error, with its path. */
  reason: string;
}

/**
 * Recomputes every hash of one continuity (or of all) from the genesis hash, in seq order, and
 * compares each with the stored one and the last with the recorded head. Costs one pass over the
 * events read, in pages; names the first event that does not match. A store whose file is
 * damaged part way (`store.damaged`) is reported, not thrown: how many events checked out before
 * the damage, and where it starts. Other store failures are thrown.
 */
export async function verifyChain(
  store: EventStore,
  options: { continuity?: string } = {},
): Promise<ChainReport> {
  const previous = new Map<string, string>();
  let events = 0;
  let mismatch: ChainMismatch | undefined;
  let damage: ChainDamage | undefined;
  let lastSeq = 0;
  const query: ReadQuery = options.continuity ? { continuity: options.continuity } : {};
  const counted = (seq: number) => {
    events += 1;
    lastSeq = seq;
  };
  try {
    mismatch = await walk(store, query, previous, counted);
  } catch (error) {
    damage = damageOf(error, lastSeq);
    // The page that failed may begin with whole events: read on one event at a time up to the
    // damage, so the report counts every event that can be read.
    for (let step = 0; step < CREEP_LIMIT && !mismatch; step++) {
      const before = lastSeq;
      try {
        mismatch = await walk(store, { ...query, after: lastSeq, limit: 1 }, previous, counted);
      } catch (again) {
        damage = damageOf(again, lastSeq);
        break;
      }
      if (lastSeq === before) break;
      damage = { ...damage, afterSeq: lastSeq };
    }
    if (mismatch) damage = undefined;
  }
  if (!mismatch && !damage) mismatch = await checkHeads(store, options, previous);
  return {
    ok: mismatch === undefined && damage === undefined,
    continuities: previous.size,
    events,
    ...(mismatch ? { mismatch } : {}),
    ...(damage ? { damage } : {}),
  };
}

/** How many single events a verification reads past a damaged page (a page's worth). */
const CREEP_LIMIT = 1000;

/**
 * The damage `error` reports (`store.damaged`), found after `afterSeq`, its reason without the
 * store's hint; rethrows any other failure.
 */
export function damageOf(error: unknown, afterSeq: number): ChainDamage {
  if (!(error instanceof StoreError && error.code === "store.damaged")) throw error;
  const hint = error.hint === undefined ? 0 : error.hint.length + 2;
  return { afterSeq, reason: error.message.slice(0, error.message.length - hint) };
}

/** Checks each event's hash in seq order; `counted` sees each one that checked out. */
async function walk(
  store: EventStore,
  query: ReadQuery,
  previous: Map<string, string>,
  counted: (seq: number) => void,
): Promise<ChainMismatch | undefined> {
  for await (const event of store.read(query)) {
    const before = previous.get(event.continuity) ?? GENESIS_HASH;
    const expected = hashOf(event, before);
    if (expected !== event.hash) {
      return {
        continuity: event.continuity,
        seq: event.seq,
        id: event.id,
        expected,
        actual: event.hash,
        reason:
          "its hash does not cover its content and its predecessor: the event or one before it was altered, removed or reordered",
      };
    }
    previous.set(event.continuity, event.hash);
    counted(event.seq);
  }
  return undefined;
}

/** Compares each continuity's recorded head with the last hash its chain reached. */
async function checkHeads(
  store: EventStore,
  options: { continuity?: string },
  previous: Map<string, string>,
): Promise<ChainMismatch | undefined> {
  const heads = options.continuity
    ? [await store.continuity(options.continuity)].filter((head) => head !== undefined)
    : await store.continuities();
  for (const head of heads) {
    const last = previous.get(head.continuity) ?? GENESIS_HASH;
    if (head.headHash !== last) {
      return {
        continuity: head.continuity,
        expected: head.headHash,
        actual: last,
        reason: `the recorded head (seq ${head.lastSeq}) differs from the chain's last event: events at the end were removed or altered`,
      };
    }
  }
  return undefined;
}

function hashOf(event: SpoolEvent, previous: string): string {
  return chainHash(previous, canonicalEvent(event));
}
