import type { AppendBatchOptions, EventStore, SeqPrediction } from "../log/index.js";
import type { HistorySnapshot } from "./history-snapshot.js";
import type { ThreadHistory } from "./thread-history.js";

/**
 * A thread loop's way past the wait for a step's end: the loop goes on while the step's end is
 * still being written, and the next step's start is written with it or right after it.
 *
 * The next compile needs the seqs of the step's events, so the loop reads them ahead
 * (`EventStore.readAhead`: the queued events with the seqs they are to get) into the history,
 * keeping a snapshot, and the next step's start is appended with that prediction: the store
 * refuses it (`store.seq-moved`, nothing written) unless every seq held. Anything that would log
 * a predicted seq before then (an input cut, a handoff) settles first: the history goes back to
 * the snapshot and reads the written events. A refused start settles the same way and the step
 * is compiled again. Where the store cannot read ahead (PostgreSQL, replay), the loop waits for
 * the step's end and catches up as before.
 */
export class StepAhead {
  readonly #store: EventStore;
  readonly #continuity: string;
  /** The last step's end, appended and not yet known to be written. */
  #ending: Promise<unknown> | undefined;
  #predicted: { prediction: SeqPrediction; snapshot: HistorySnapshot } | undefined;

  constructor(store: EventStore, continuity: string) {
    this.#store = store;
    this.#continuity = continuity;
  }

  /** A step ended; `ended` settles once its end is written (`undefined`: it is written). */
  stepEnded(ended: Promise<unknown> | undefined): void {
    this.#ending = ended;
    this.#predicted = undefined;
  }

  /**
   * Feeds `history` what the continuity gained: read ahead while the last step's end is queued,
   * else (once that end is written) what the store holds.
   */
  async catchUp(history: ThreadHistory): Promise<void> {
    const ahead = this.#ending && this.#store.readAhead?.(this.#continuity, history.lastSeq);
    if (ahead) {
      const snapshot = history.snapshot();
      for (const event of ahead.events) history.apply(event);
      this.#predicted = { prediction: ahead.prediction, snapshot };
      return;
    }
    await this.#readWritten(history);
  }

  /** True while `history` holds events read ahead of their write. */
  get ahead(): boolean {
    return this.#predicted !== undefined;
  }

  /**
   * Takes back what was read ahead, waits for the last step's end to be written and reads what
   * the store holds: `history` then holds only written events, with their seqs.
   */
  async settle(history: ThreadHistory): Promise<void> {
    const predicted = this.#predicted;
    if (!predicted) return;
    this.#predicted = undefined;
    history.restore(predicted.snapshot);
    await this.#readWritten(history);
  }

  /** Waits for the last step's end to be written, then feeds `history` what the store holds. */
  async #readWritten(history: ThreadHistory): Promise<void> {
    const ending = this.#ending;
    this.#ending = undefined;
    await ending;
    await catchUp(this.#store, this.#continuity, history);
  }

  /** Waits for the last step's end to be written (and fails as its write did). */
  async written(): Promise<void> {
    await this.#ending;
  }

  /** How the next step's start is appended: after the last step's end, with the prediction. */
  startOptions(): AppendBatchOptions | undefined {
    if (!this.#predicted || !this.#ending) return undefined;
    return { after: [this.#ending], predicted: this.#predicted.prediction };
  }
}

/** Feeds the history every event of the continuity it has not seen yet. */
export async function catchUp(
  store: EventStore,
  continuity: string,
  history: ThreadHistory,
): Promise<void> {
  // What this store wrote itself since, when nothing else committed: no read of the database.
  const recent = store.readRecent?.(continuity, history.lastSeq);
  if (recent) {
    for (const event of recent) history.apply(event);
    return;
  }
  for await (const event of store.read({ continuity, after: history.lastSeq })) {
    history.apply(event);
  }
}
