/**
 * Keeps the first and last `cap / 2` bytes of a stream and counts the rest, so a command's
 * output is bounded in memory but shows both how it started and how it ended.
 */
export class OutputBuffer {
  private readonly half: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte written, kept or not. */
  total = 0;

  constructor(cap: number) {
    this.half = Math.max(1, Math.floor(cap / 2));
  }

  /** Adds `chunk`. */
  write(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.half) {
      const taken = rest.subarray(0, this.half - this.headBytes);
      this.head.push(taken);
      this.headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.half) {
      const first = this.tail[0] as Buffer;
      const excess = this.tailBytes - this.half;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  /** True when bytes were dropped from the middle. */
  get truncated(): boolean {
    return this.total > this.headBytes + this.tailBytes;
  }

  /** The kept text; a marker says how many bytes were left out between head and tail. */
  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    const tail = Buffer.concat(this.tail).toString("utf8");
    if (!this.truncated) return head + tail;
    const omitted = this.total - this.headBytes - this.tailBytes;
    return `${head}\n… [${omitted} bytes omitted] …\n${tail}`;
  }
}
