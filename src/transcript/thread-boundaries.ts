import type { EventStore } from "../log/index.js";
import type { EventData, EventOf, NewEventOf } from "../spec/index.js";
import {
  type CheckpointEvent,
  type CheckpointReason,
  writeCheckpoint,
} from "./checkpoint-writer.js";
import type { CheckpointSigner } from "./signing.js";
import type { TranscriptSink } from "./transcript-sink.js";

/** What every thread boundary needs. */
export interface ThreadBoundaryOptions {
  store: EventStore;
  continuity: string;
  thread: string;
  /** Signs the boundary; without it the event is written and nothing is signed. */
  signer?: CheckpointSigner;
  /** The thread's live transcript, so the checkpoint also signs its bytes. */
  transcript?: TranscriptSink;
}

/** A boundary event as stored, and the checkpoint that signs it. */
export interface ThreadBoundary<
  T extends "thread.completed" | "thread.continued" | "thread.resumed",
> {
  event: EventOf<T>;
  checkpoint?: CheckpointEvent;
}

/**
 * Ends a thread with its final result: `thread.completed`, then a `finish` checkpoint whose
 * signature covers it (and the transcript up to it), so `spool verify --strict` accepts the thread.
 */
export function finishThread(
  options: ThreadBoundaryOptions & { result?: string },
): Promise<ThreadBoundary<"thread.completed">> {
  return boundary(options, "finish", {
    continuity: options.continuity,
    stream: { kind: "thread", id: options.thread },
    type: "thread.completed",
    data: options.result === undefined ? {} : { result: options.result },
  });
}

/**
 * Hands a thread's work to its continuation: `thread.continued`, then a `handoff` checkpoint that
 * signs it, before the continuation starts.
 */
export function handOffThread(
  options: ThreadBoundaryOptions & {
    continuation: string;
    reason: string;
    summary?: NonNullable<EventData<"thread.continued">["summary"]>;
    pressureRatio?: number;
  },
): Promise<ThreadBoundary<"thread.continued">> {
  return boundary(options, "handoff", {
    continuity: options.continuity,
    stream: { kind: "thread", id: options.thread },
    type: "thread.continued",
    data: {
      continuation: options.continuation,
      reason: options.reason,
      ...(options.summary ? { summary: options.summary } : {}),
      ...(options.pressureRatio !== undefined ? { pressure_ratio: options.pressureRatio } : {}),
    },
  });
}

/** Resumes a suspended or interrupted thread: `thread.resumed`, then a `resume` checkpoint. */
export function resumeThread(
  options: ThreadBoundaryOptions & { reason: string },
): Promise<ThreadBoundary<"thread.resumed">> {
  return boundary(options, "resume", {
    continuity: options.continuity,
    stream: { kind: "thread", id: options.thread },
    type: "thread.resumed",
    data: { reason: options.reason },
  });
}

async function boundary<T extends "thread.completed" | "thread.continued" | "thread.resumed">(
  options: ThreadBoundaryOptions,
  reason: CheckpointReason,
  event: NewEventOf<T>,
): Promise<ThreadBoundary<T>> {
  const stored = (await options.store.append(event)) as EventOf<T>;
  if (!options.signer) return { event: stored };
  const checkpoint = await writeCheckpoint({
    store: options.store,
    signer: options.signer,
    continuity: options.continuity,
    reason,
    thread: options.thread,
    ...transcriptDigestOption(options.transcript),
  });
  return { event: stored, checkpoint };
}

/**
 * The `transcriptDigest` option of `writeCheckpoint` for a thread's live transcript: waits until
 * the file holds the log up to the signed seq, then gives the sha256 of those bytes. A transcript
 * sink that has failed (a file that cannot be written) gives no digest: the checkpoint is signed
 * without one, and the run is not failed for a file that is only a view of the log.
 */
export function transcriptDigestOption(transcript: TranscriptSink | undefined): {
  transcriptDigest?: (seq: number) => Promise<string | undefined>;
} {
  if (!transcript) return {};
  return {
    transcriptDigest: async (seq) => {
      try {
        await transcript.caughtUp(seq);
      } catch {
        return undefined;
      }
      return transcript.digestUpTo(seq);
    },
  };
}
