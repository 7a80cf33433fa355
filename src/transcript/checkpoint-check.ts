import type { KeyObject } from "node:crypto";
import type { EventStore } from "../log/index.js";
import { EVENT_CATALOG, type EventData, type SpoolEvent } from "../spec/index.js";
import { checkpointText, verifySignature } from "./signing.js";

/** What can be wrong with a continuity's checkpoints, first problem first. */
export type CheckpointProblemKind =
  /** The hash chain does not recompute: an event was altered, removed or reordered. */
  | "chain-broken"
  /** A `checkpoint.signed` whose data does not match its schema. */
  | "malformed-checkpoint"
  /** A checkpoint on thread T's stream that names another thread. */
  | "thread-mismatch"
  /** Signed by a key whose public half the verifier was not given. */
  | "unknown-key"
  /** The signature does not verify: the checkpoint was altered or forged. */
  | "bad-signature"
  /** The signed seq is not an earlier event of this continuity. */
  | "missing-head"
  /** The event at the signed seq has another hash than the one signed. */
  | "head-mismatch"
  /** `--strict`: a thread's finish or handoff that no checkpoint signs. */
  | "unsigned-finish";

/** The first thing verification found wrong; `seq`/`id` name the event (absent for the head record). */
export interface CheckpointProblem {
  kind: CheckpointProblemKind;
  seq?: number;
  id?: string;
  /** What is wrong and what to do about it. */
  message: string;
}

/** The data of a stored checkpoint. */
export type CheckpointData = EventData<"checkpoint.signed">;

const RESTORE =
  "Treat the log as tampered: restore it from a trusted copy and do not act on events from here on";

/**
 * Checks one `checkpoint.signed` event: its data against the catalog, that a checkpoint on a
 * thread stream names that thread, that its key is in `publicKeys` and its signature verifies,
 * and that the event at the signed seq is an earlier event of the same continuity whose hash is
 * the signed head. Resolves with the verified data, or the problem; never throws for a bad
 * checkpoint (store failures propagate).
 */
export async function checkCheckpoint(
  store: EventStore,
  event: SpoolEvent,
  publicKeys: ReadonlyMap<string, KeyObject>,
): Promise<{ data: CheckpointData } | { problem: CheckpointProblem }> {
  const at = { seq: event.seq, id: event.id };
  const parsed = EVENT_CATALOG["checkpoint.signed"].schema.safeParse(event.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      problem: {
        kind: "malformed-checkpoint",
        ...at,
        message: `checkpoint.signed data is not valid (${issue?.path.join(".") || "data"}: ${issue?.message}). ${RESTORE}`,
      },
    };
  }
  const data = parsed.data;
  if (event.stream.kind === "thread" && data.thread !== event.stream.id) {
    return {
      problem: {
        kind: "thread-mismatch",
        ...at,
        message: `the checkpoint is on thread ${JSON.stringify(event.stream.id)}'s stream but signs ${data.thread === undefined ? "no thread" : `thread ${JSON.stringify(data.thread)}`}: it was moved or forged. ${RESTORE}`,
      },
    };
  }
  const key = publicKeys.get(data.key_id);
  if (!key) {
    const known = [...publicKeys.keys()];
    return {
      problem: {
        kind: "unknown-key",
        ...at,
        message: `signed by key ${data.key_id}, which is not among the known public keys (${known.length === 0 ? "none" : known.join(", ")}). Give the verifier the public key of that key id (spool verify --keys DIR, or SPOOL_KEYS); if no trusted key has that id, the checkpoint is forged`,
      },
    };
  }
  const text = checkpointText({
    continuity: event.continuity,
    reason: data.reason,
    seq: data.seq,
    head_hash: data.head_hash,
    ...(data.thread !== undefined ? { thread: data.thread } : {}),
    ...(data.transcript_sha256 !== undefined ? { transcript_sha256: data.transcript_sha256 } : {}),
  });
  if (!verifySignature(key, text, data.signature)) {
    return {
      problem: {
        kind: "bad-signature",
        ...at,
        message: `the signature does not match the checkpoint's content under key ${data.key_id}: the checkpoint was altered or forged. ${RESTORE}`,
      },
    };
  }
  const head = data.seq < event.seq ? await eventAt(store, event.continuity, data.seq) : undefined;
  if (!head) {
    return {
      problem: {
        kind: "missing-head",
        ...at,
        message: `the checkpoint signs seq ${data.seq}, but continuity ${JSON.stringify(event.continuity)} has no event there before the checkpoint: events were removed or moved. ${RESTORE}`,
      },
    };
  }
  if (head.hash !== data.head_hash) {
    return {
      problem: {
        kind: "head-mismatch",
        ...at,
        message: `the event at seq ${data.seq} (id ${head.id}) has hash ${head.hash}, but the checkpoint signed ${data.head_hash}: the log up to seq ${data.seq} was rewritten after it was signed. ${RESTORE}`,
      },
    };
  }
  return { data };
}

async function eventAt(
  store: EventStore,
  continuity: string,
  seq: number,
): Promise<SpoolEvent | undefined> {
  for await (const event of store.read({ continuity, after: seq - 1, until: seq, limit: 1 })) {
    return event;
  }
  return undefined;
}
