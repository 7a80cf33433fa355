import { canonicalEvent, chainHash, GENESIS_HASH, type SpoolEvent } from "../spec/index.js";
import type { EventStore } from "./event-store.js";

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
}

/**
 * Recomputes every hash of one continuity (or of all) from the genesis hash, in seq order, and
 * compares each with the stored one and the last with the recorded head. Costs one pass over the
 * events read, in pages; names the first event that does not match.
 */
export async function verifyChain(
  store: EventStore,
  options: { continuity?: string } = {},
): Promise<ChainReport> {
  const previous = new Map<string, string>();
  let events = 0;
  let mismatch: ChainMismatch | undefined;
  for await (const event of store.read(
    options.continuity ? { continuity: options.continuity } : {},
  )) {
    const before = previous.get(event.continuity) ?? GENESIS_HASH;
    const expected = hashOf(event, before);
    events += 1;
    if (expected !== event.hash) {
      mismatch = {
        continuity: event.continuity,
        seq: event.seq,
        id: event.id,
        expected,
        actual: event.hash,
        reason:
          "its hash does not cover its content and its predecessor: the event or one before it was altered, removed or reordered",
      };
      break;
    }
    previous.set(event.continuity, event.hash);
  }
  if (!mismatch) {
    const heads = options.continuity
      ? [await store.continuity(options.continuity)].filter((head) => head !== undefined)
      : await store.continuities();
    for (const head of heads) {
      const last = previous.get(head.continuity) ?? GENESIS_HASH;
      if (head.headHash !== last) {
        mismatch = {
          continuity: head.continuity,
          expected: head.headHash,
          actual: last,
          reason: `the recorded head (seq ${head.lastSeq}) differs from the chain's last event: events at the end were removed or altered`,
        };
        break;
      }
    }
  }
  return {
    ok: mismatch === undefined,
    continuities: previous.size,
    events,
    ...(mismatch ? { mismatch } : {}),
  };
}

function hashOf(event: SpoolEvent, previous: string): string {
  return chainHash(previous, canonicalEvent(event));
}
