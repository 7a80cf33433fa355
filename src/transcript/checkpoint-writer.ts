import type { EventStore } from "../log/index.js";
import type { EventOf, StreamRef } from "../spec/index.js";
import { CheckpointError } from "./checkpoint-error.js";
import { type CheckpointPayload, type CheckpointSigner, checkpointText } from "./signing.js";

/** Why a checkpoint was written: a step boundary, a handoff, a resume, a finish, or by hand. */
export type CheckpointReason = "step" | "handoff" | "resume" | "finish" | "manual";

/** A stored `checkpoint.signed` event. */
export type CheckpointEvent = EventOf<"checkpoint.signed">;

/** Options of `writeCheckpoint`. */
export interface WriteCheckpointOptions {
  store: EventStore;
  signer: CheckpointSigner;
  continuity: string;
  reason: CheckpointReason;
  /** The thread whose boundary this is; signed, and the checkpoint goes on its thread stream. */
  thread?: string;
  /**
   * Where to append the checkpoint instead (the catalog allows continuity, thread and step
   * streams). Default: `{ kind: "thread", id: thread }` with a thread, else the continuity stream.
   * `verifyCheckpoints` with a `thread` reads only that thread's own stream, so a thread's
   * checkpoints belong there.
   */
  stream?: StreamRef;
  /**
   * The sha256 (hex) of the thread's transcript bytes that cover the log up to `seq`, or
   * `undefined` when there is no transcript. Called once, after the head was read.
   */
  transcriptDigest?: (seq: number) => Promise<string | undefined>;
  /** Who writes it (default `null`: the runtime on its own). */
  actor?: string | null;
}

/**
 * Signs the head of a continuity's hash chain and appends the signature as `checkpoint.signed`;
 * resolves with the stored event.
 *
 * Flushes the store's pending appends first (droppable events included), so the head it reads
 * covers everything appended before the call. The signature covers `checkpointText` of the
 * continuity, the reason, the head's seq and hash, the thread and the transcript digest: whole
 * values, never a summary of them.
 *
 * Race: the signature covers the head *at the moment it was read*. Events appended by others
 * between that read and this append (and the checkpoint event itself) come after the signed
 * seq; they are covered by the next checkpoint, and until then `verifyCheckpoints` counts them as
 * the unsigned tail. Write a checkpoint after the last event of a handoff or finish for strict
 * verification to pass.
 *
 * Throws `CheckpointError` (`checkpoint.no-continuity`) when the continuity has no events, and
 * whatever the store throws (`StoreError`) when the flush, read or append fails; nothing is
 * appended then.
 */
export async function writeCheckpoint(options: WriteCheckpointOptions): Promise<CheckpointEvent> {
  const { store, signer, continuity, reason, thread } = options;
  await store.flush();
  const head = await store.continuity(continuity);
  if (!head) {
    throw new CheckpointError(
      "checkpoint.no-continuity",
      `cannot sign continuity ${JSON.stringify(continuity)}: it has no events in ${store.location}`,
      {
        hint: "Create it first (spool continuities create), or check the continuity id and --db",
        details: { continuity },
      },
    );
  }
  const transcript = await options.transcriptDigest?.(head.lastSeq);
  const payload: CheckpointPayload = {
    continuity,
    reason,
    seq: head.lastSeq,
    head_hash: head.headHash,
    ...(thread !== undefined ? { thread } : {}),
    ...(transcript !== undefined ? { transcript_sha256: transcript } : {}),
  };
  const stream =
    options.stream ??
    (thread !== undefined
      ? { kind: "thread" as const, id: thread }
      : { kind: "continuity" as const, id: continuity });
  const stored = await store.append({
    continuity,
    type: "checkpoint.signed",
    stream,
    actor: options.actor ?? null,
    origin: null,
    data: {
      reason,
      seq: payload.seq,
      head_hash: payload.head_hash,
      key_id: signer.keyId,
      ...(payload.thread !== undefined ? { thread: payload.thread } : {}),
      ...(payload.transcript_sha256 !== undefined
        ? { transcript_sha256: payload.transcript_sha256 }
        : {}),
      signature: signer.sign(checkpointText(payload)),
    },
  });
  return stored as CheckpointEvent;
}
