/**
 * Turns to run one at a time, in the order they were asked for: the queue that keeps two side
 * effects of one continuity from interleaving.
 *
 * Contract: `acquire` resolves with a `release` function once every earlier holder has released;
 * calling `release` more than once is harmless. A holder that never releases blocks every later
 * one (the scheduler releases when its executor's call settles, whatever the action's timeout).
 * Never rejects.
 */
export class SerialQueue {
  #tail: Promise<void> = Promise.resolve();

  /** Waits for the queue's turn; the returned function hands the turn on. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = () => resolve();
    });
    const turn = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => released);
    return turn;
  }

  /** Runs `task` in its turn and hands the turn on when it settles; its result is `task`'s. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await task();
    } finally {
      release();
    }
  }
}
