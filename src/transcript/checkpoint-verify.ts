import type { KeyObject } from "node:crypto";
import { type EventStore, verifyChain } from "../log/index.js";
import type { SpoolEvent } from "../spec/index.js";
import { type CheckpointProblem, checkCheckpoint } from "./checkpoint-check.js";
import { ThreadMembership } from "./thread-streams.js";

export type {
  CheckpointData,
  CheckpointProblem,
  CheckpointProblemKind,
} from "./checkpoint-check.js";

/** Options of `verifyCheckpoints`. */
export interface VerifyCheckpointsOptions {
  continuity: string;
  /**
   * Verify only this thread's checkpoints (those on its thread stream, and those on the
   * continuity stream that sign it) and count only its unsigned tail. The chain is still the
   * whole continuity's.
   */
  thread?: string;
  /** Trusted public keys by key id (`loadPublicKeys`). */
  publicKeys: ReadonlyMap<string, KeyObject>;
  /**
   * Also require that every thread in scope that ended (`thread.completed`) or handed off
   * (`thread.continued`) has a checkpoint whose signature covers its last such event.
   */
  strict?: boolean;
}

/** Events in scope that no verified checkpoint covers yet: informational, not a failure. */
export interface UnsignedTail {
  /** How many (checkpoint events themselves not counted). */
  events: number;
  /** The newest seq a verified checkpoint covers; 0 when none does. */
  afterSeq: number;
}

/** What `verifyCheckpoints` found. */
export interface CheckpointReport {
  /** True when there is no `firstProblem`. */
  ok: boolean;
  continuity: string;
  thread?: string;
  /** Events of the continuity whose hashes were recomputed. */
  events: number;
  /** Checkpoints in scope whose signature and head checked out. */
  checkpoints: number;
  /** The key ids of those checkpoints, sorted. */
  keyIds: string[];
  unsignedTail: UnsignedTail;
  firstProblem?: CheckpointProblem;
}

const CHECKPOINT = "checkpoint.signed";
const ENDINGS = ["thread.completed", "thread.continued"];

/**
 * Verifies a continuity's signed checkpoints (or one thread's) against its hash chain.
 *
 * First recomputes the whole chain (`verifyChain`). Then, in seq order, checks every
 * `checkpoint.signed` in scope before any chain break (the continuity's, or with `thread` only
 * the thread's): the key is known, the signature verifies, and the event at the signed seq exists
 * in this continuity with the signed hash. Verification stops at the first problem: a bad
 * checkpoint before the chain break, else the chain break. With `strict` and no integrity
 * problem, a finished or handed-off thread that no verified checkpoint covers (signed seq at or
 * after its last `thread.completed`/`thread.continued`) is a problem too.
 *
 * The `transcript_sha256` a checkpoint signs is not compared with any file here: that is
 * `verifyTranscriptFile`'s part. Costs two passes over the continuity (the chain, then its
 * checkpoints and endings), one point read per checkpoint, and a read of the unsigned tail (the
 * whole continuity with `thread`, to tell which steps are the thread's). Never throws for what it
 * finds (that is the report); store failures propagate as `StoreError`.
 */
export async function verifyCheckpoints(
  store: EventStore,
  options: VerifyCheckpointsOptions,
): Promise<CheckpointReport> {
  const { continuity, thread, publicKeys } = options;
  const chain = await verifyChain(store, { continuity });
  const breakSeq = chain.mismatch?.seq ?? Number.POSITIVE_INFINITY;
  const checkpoints: SpoolEvent[] = [];
  const lastEnding = new Map<string, SpoolEvent>();
  for await (const event of store.read({ continuity, types: [CHECKPOINT, ...ENDINGS] })) {
    if (event.seq >= breakSeq) break;
    if (event.type === CHECKPOINT) {
      if (thread === undefined || isThreadCheckpoint(event, thread)) checkpoints.push(event);
    } else if (
      event.stream.kind === "thread" &&
      (thread === undefined || event.stream.id === thread)
    ) {
      lastEnding.set(event.stream.id, event);
    }
  }

  let firstProblem: CheckpointProblem | undefined;
  let verified = 0;
  let signedThrough = 0;
  const keyIds = new Set<string>();
  for (const event of checkpoints) {
    const result = await checkCheckpoint(store, event, publicKeys);
    if ("problem" in result) {
      firstProblem = result.problem;
      break;
    }
    verified += 1;
    keyIds.add(result.data.key_id);
    signedThrough = Math.max(signedThrough, result.data.seq);
  }
  if (!firstProblem && chain.mismatch) {
    const { mismatch } = chain;
    firstProblem = {
      kind: "chain-broken",
      ...(mismatch.seq !== undefined ? { seq: mismatch.seq } : {}),
      ...(mismatch.id !== undefined ? { id: mismatch.id } : {}),
      message: `${mismatch.reason} (expected hash ${mismatch.expected}, stored ${mismatch.actual}). Restore the log from a trusted copy; events from here on cannot be trusted`,
    };
  }
  if (!firstProblem && options.strict) firstProblem = unsignedEnding(lastEnding, signedThrough);

  const unsignedTail = {
    events: await countTail(store, continuity, thread, signedThrough),
    afterSeq: signedThrough,
  };
  return {
    ok: firstProblem === undefined,
    continuity,
    ...(thread !== undefined ? { thread } : {}),
    events: chain.events,
    checkpoints: verified,
    keyIds: [...keyIds].sort(),
    unsignedTail,
    ...(firstProblem ? { firstProblem } : {}),
  };
}

/** The earliest last-ending of a thread that the newest verified checkpoint does not cover. */
function unsignedEnding(
  lastEnding: ReadonlyMap<string, SpoolEvent>,
  signedThrough: number,
): CheckpointProblem | undefined {
  const uncovered = [...lastEnding.values()]
    .filter((event) => event.seq > signedThrough)
    .sort((a, b) => a.seq - b.seq)[0];
  if (!uncovered) return undefined;
  const what = uncovered.type === "thread.continued" ? "handed off" : "finished";
  return {
    kind: "unsigned-finish",
    seq: uncovered.seq,
    id: uncovered.id,
    message: `thread ${JSON.stringify(uncovered.stream.id)} ${what} (${uncovered.type}) but no checkpoint signs it${signedThrough > 0 ? ` (the newest covers seq ${signedThrough})` : ""}: a checkpoint must be written after every handoff and finish. Run the runtime with a checkpoint key (spool keys init) so it signs them`,
  };
}

/**
 * A checkpoint of thread T: one on T's own stream, or one on the continuity stream that signs T
 * (as `ThreadMembership` counts it). A checkpoint on T's stream that names another thread is
 * picked too, so that it is reported.
 */
function isThreadCheckpoint(event: SpoolEvent, thread: string): boolean {
  if (event.stream.kind === "thread") return event.stream.id === thread;
  return (
    event.stream.kind === "continuity" && (event.data as { thread?: unknown }).thread === thread
  );
}

/**
 * Events in scope after `afterSeq`, not counting checkpoints. A thread's events are decided by
 * `ThreadMembership` (its stream, its steps and their tasks), which needs the whole continuity.
 */
async function countTail(
  store: EventStore,
  continuity: string,
  thread: string | undefined,
  afterSeq: number,
): Promise<number> {
  const membership = thread === undefined ? undefined : new ThreadMembership(thread);
  let count = 0;
  for await (const event of store.read({
    continuity,
    ...(membership ? {} : { after: afterSeq }),
  })) {
    const member = membership ? membership.accept(event) : true;
    if (member && event.seq > afterSeq && event.type !== CHECKPOINT) count += 1;
  }
  return count;
}
