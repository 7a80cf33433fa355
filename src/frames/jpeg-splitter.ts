/** What `JpegSplitter.push` found in a chunk. */
export type SplitPiece = { kind: "frame"; data: Buffer } | { kind: "too-big"; bytes: number };

/**
 * Splits a stream of concatenated JPEGs (ffmpeg's MJPEG `image2pipe`) into whole images on their
 * SOI (`FF D8`) and EOI (`FF D9`) markers. Holds at most `maxBytes` of one image: a longer one is
 * dropped as it streams by (reported once as `too-big` with its size) and splitting resumes at
 * the next SOI. Bytes between images are skipped. Works for any chunking of the same stream.
 */
export class JpegSplitter {
  readonly #maxBytes: number;
  #parts: Buffer[] = [];
  #held = 0;
  /** Inside an image (after its SOI). */
  #inImage = false;
  /** Inside an image that is too big: its size so far, counted, not held. */
  #skipped: number | undefined;
  /** The last byte of the previous chunk (a marker may be split across chunks). */
  #previous = -1;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes held for the image in progress. */
  get held(): number {
    return this.#held;
  }

  /** Feeds a chunk; returns the images (and oversized ones) it completed. */
  push(chunk: Buffer): SplitPiece[] {
    const out: SplitPiece[] = [];
    let at = 0;
    while (at < chunk.length) {
      let searchFrom = at;
      if (!this.#inImage) {
        const soi = this.#find(chunk, at, 0xd8);
        if (soi < 0) break;
        this.#inImage = true;
        this.#parts = [];
        this.#held = 0;
        this.#skipped = undefined;
        // The SOI's FF is the byte before, possibly the last one of the previous chunk.
        if (soi === 0) this.#hold(Buffer.of(0xff));
        at = Math.max(0, soi - 1);
        searchFrom = soi + 1;
      }
      const eoi = this.#find(chunk, searchFrom, 0xd9);
      if (eoi < 0) {
        this.#hold(chunk.subarray(at));
        break;
      }
      this.#hold(chunk.subarray(at, eoi + 1));
      out.push(this.#finish());
      at = eoi + 1;
    }
    if (chunk.length > 0) this.#previous = chunk[chunk.length - 1]!;
    return out;
  }

  /** The index of the `code` byte of the first `FF <code>` marker at or after `from`, or -1. */
  #find(chunk: Buffer, from: number, code: number): number {
    for (let at = chunk.indexOf(code, from); at >= 0; at = chunk.indexOf(code, at + 1)) {
      const before = at > 0 ? chunk[at - 1] : this.#previous;
      if (before === 0xff) return at;
    }
    return -1;
  }

  #hold(bytes: Buffer): void {
    if (this.#skipped !== undefined) {
      this.#skipped += bytes.length;
      return;
    }
    if (this.#held + bytes.length > this.#maxBytes) {
      this.#skipped = this.#held + bytes.length;
      this.#parts = [];
      this.#held = 0;
      return;
    }
    // A stream may reuse its chunks: copy what is held.
    this.#parts.push(Buffer.from(bytes));
    this.#held += bytes.length;
  }

  #finish(): SplitPiece {
    this.#inImage = false;
    const skipped = this.#skipped;
    const parts = this.#parts;
    this.#parts = [];
    this.#held = 0;
    this.#skipped = undefined;
    if (skipped !== undefined) return { kind: "too-big", bytes: skipped };
    return { kind: "frame", data: parts.length === 1 ? parts[0]! : Buffer.concat(parts) };
  }
}
