/**
 * A single-consumer queue that hands out items in the order they were pushed, where an item may
 * be a promise: the consumer waits for it before anything pushed after it. The step runner uses
 * it so that a held `$reference` delays the output after it without delaying execution.
 *
 * Contract: `next` resolves items in push order and `{ done: true }` once closed and empty; items
 * pushed after `close` are dropped. Promised items must not reject. One `next` at a time.
 */
export class OrderedQueue<T> {
  #items: (T | Promise<T> | undefined)[] = [];
  #head = 0;
  #closed = false;
  #wake: (() => void) | undefined;

  push(item: T | Promise<T>): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#notify();
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  get closed(): boolean {
    return this.#closed;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    while (true) {
      if (this.#head < this.#items.length) {
        const item = this.#items[this.#head]!;
        this.#items[this.#head] = undefined;
        this.#head += 1;
        if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
          this.#items = this.#items.slice(this.#head);
          this.#head = 0;
        }
        return { value: await item, done: false };
      }
      if (this.#closed) return { value: undefined, done: true };
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
