/** When the WAL is copied back into the database file. */
export interface WalCheckpointOptions {
  /** Checkpoint after the store has written nothing for this long (default 200 ms). */
  idleMs: number;
  /** Checkpoint at once after this many events since the last checkpoint (default 50,000). */
  maxEvents: number;
}

/**
 * Moves SQLite's WAL checkpoints out of the append path. With the default auto-checkpoint,
 * every thousandth page or so a commit also copies the WAL into the database file, which set the
 * p99 of a lone append at three to ten times its median. The store's connection turns
 * auto-checkpointing off and this runs a `PASSIVE` checkpoint (it never waits for readers or
 * writers) once the store is idle, or after `maxEvents` events under constant load, so the WAL
 * stays bounded.
 */
export class WalCheckpointer {
  readonly #checkpoint: () => void;
  readonly #options: WalCheckpointOptions;
  #events = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(checkpoint: () => void, options: WalCheckpointOptions) {
    this.#checkpoint = checkpoint;
    this.#options = options;
  }

  /** Called after every committed write of `events` events. */
  wrote(events: number): void {
    this.#events += events;
    if (this.#events >= this.#options.maxEvents) {
      this.#run();
      return;
    }
    if (this.#timer) this.#timer.refresh();
    else {
      this.#timer = setTimeout(() => this.#run(), this.#options.idleMs);
      this.#timer.unref();
    }
  }

  /** Cancels a pending checkpoint (closing the last connection checkpoints anyway). */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #run(): void {
    this.stop();
    this.#events = 0;
    this.#checkpoint();
  }
}
