/**
 * Gives each distinct key (`text`, `call:0`, `3:summary:1`, …) the next block number, in order of
 * first request, so blocks are numbered in the order they first appear in the stream.
 */
export class BlockNumbers {
  readonly #numbers = new Map<string, number>();

  /** The block number of `key`, assigning the next one the first time. */
  of(key: string): number {
    let block = this.#numbers.get(key);
    if (block === undefined) {
      block = this.#numbers.size;
      this.#numbers.set(key, block);
    }
    return block;
  }

  /** The block number of `key`, or undefined when it has none yet. */
  peek(key: string): number | undefined {
    return this.#numbers.get(key);
  }
}
