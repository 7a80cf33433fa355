/**
 * The messages a connection received and its source has not yet delivered, in order. The
 * connection pushes (and stops reading while anything waits here); the source's one consumer
 * takes them with `next()`. `whenDrained()` tells the reading side when the consumer has taken
 * everything and asks for more, which is when reading may go on: the inbox stays as small as
 * what one read of the socket holds.
 */
export class MessageInbox<T> {
  readonly #items: T[] = [];
  #ended = false;
  #waiting = false;
  #wake: (() => void) | undefined;
  #drainWaiters: Array<() => void> = [];

  /** How many messages wait. */
  get size(): number {
    return this.#items.length;
  }

  /** Adds a message for the consumer. Ignored after `end()`. */
  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#wakeConsumer();
  }

  /** No more messages will come: `next()` returns what is left, then `undefined`. */
  end(): void {
    this.#ended = true;
    this.#wakeConsumer();
    this.#releaseDrainWaiters();
  }

  /**
   * The next message, waiting for one; `undefined` once the inbox ended and is empty. Calling
   * it with nothing queued marks the inbox drained.
   */
  async next(): Promise<T | undefined> {
    while (this.#items.length === 0) {
      if (this.#ended) return undefined;
      this.#waiting = true;
      this.#releaseDrainWaiters();
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#waiting = false;
    }
    return this.#items.shift();
  }

  /** Resolves once the consumer waits on an empty inbox (at once if it does), or it ended. */
  whenDrained(): Promise<void> {
    if (this.#ended || (this.#waiting && this.#items.length === 0)) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  #wakeConsumer(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #releaseDrainWaiters(): void {
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
  }
}
