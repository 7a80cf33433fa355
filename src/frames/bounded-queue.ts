/** What a full `BoundedQueue` does with a new item. */
export type OverflowPolicy = "wait" | "latest";

/**
 * A single-consumer queue holding at most `capacity` items. When full, `push` either waits for
 * room (`wait`: backpressure) or drops the oldest item (`latest`: the newest always gets in) and
 * counts it; `take` returns how many were dropped just before the item it returns.
 */
export class BoundedQueue<T> {
  readonly capacity: number;
  readonly policy: OverflowPolicy;
  #items: { item: T; droppedBefore: number }[] = [];
  #dropped = 0;
  #droppedTotal = 0;
  #ended = false;
  #wakeTaker: (() => void) | undefined;
  #wakePushers: (() => void)[] = [];

  constructor(capacity: number, policy: OverflowPolicy) {
    this.capacity = Math.max(1, capacity);
    this.policy = policy;
  }

  /** Items dropped so far (`latest` only). */
  get dropped(): number {
    return this.#droppedTotal;
  }

  /** Adds an item (ignored after `end`); resolves once it is in. */
  async push(item: T): Promise<void> {
    while (!this.#ended && this.policy === "wait" && this.#items.length >= this.capacity) {
      await new Promise<void>((resolve) => this.#wakePushers.push(resolve));
    }
    if (this.#ended) return;
    if (this.#items.length >= this.capacity) {
      const oldest = this.#items.shift()!;
      const next = this.#items[0];
      if (next) next.droppedBefore += 1 + oldest.droppedBefore;
      else this.#dropped += 1 + oldest.droppedBefore;
      this.#droppedTotal += 1;
    }
    this.#items.push({ item, droppedBefore: this.#dropped });
    this.#dropped = 0;
    const wake = this.#wakeTaker;
    this.#wakeTaker = undefined;
    wake?.();
  }

  /** The next item and how many were dropped just before it; undefined once ended and empty. */
  async take(): Promise<{ item: T; droppedBefore: number } | undefined> {
    while (this.#items.length === 0) {
      if (this.#ended) return undefined;
      await new Promise<void>((resolve) => {
        this.#wakeTaker = resolve;
      });
    }
    const next = this.#items.shift()!;
    for (const wake of this.#wakePushers.splice(0)) wake();
    return next;
  }

  /** No more items: `take` returns what is left, then undefined; waiting pushers return. */
  end(): void {
    this.#ended = true;
    const wake = this.#wakeTaker;
    this.#wakeTaker = undefined;
    wake?.();
    for (const resolve of this.#wakePushers.splice(0)) resolve();
  }
}
