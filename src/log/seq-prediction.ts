import { type PreparedEvent, StoreError } from "../spec/index.js";

/**
 * The refusal of a batch appended with a seq prediction (`AppendBatchOptions.predicted`) that no
 * longer holds: something else was written before the events it predicted. Nothing of the batch
 * was written; read the log again and append what follows from it.
 */
export function seqMovedError(detail: string): StoreError {
  return new StoreError("store.seq-moved", detail, {
    hint: "Something else was written to the log first (another process or connection): read what it holds now and append again; nothing of this batch was written",
  });
}

/** True for the refusal `seqMovedError` makes. */
export function isSeqMoved(error: unknown): boolean {
  return error instanceof StoreError && error.code === "store.seq-moved";
}

/**
 * The seqs the queue's appends in flight and pending were to get, as `AppendQueue.predict` saw
 * them: a group appended with it is written only if each of them got its predicted seq.
 */
export interface SeqPrediction {
  /** The groups predicted (opaque): one that fails breaks the prediction. */
  readonly groups: readonly object[];
  /** The seq the first of them was to get. */
  readonly base: number;
  /** The queue's count of events handed to writes when `base` was its next seq. */
  readonly handed: number;
}

/** One pending event with the seq `predict` gives it. */
export interface PredictedEvent {
  event: PreparedEvent;
  seq: number;
}
