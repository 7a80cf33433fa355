import { randomFillSync } from "node:crypto";

/**
 * A random source for `ulid` that draws cryptographic bytes 4 KiB at a time. `ulid`'s default
 * asks the OS for one byte per character (16 calls per id), which cost about 8% of a lone
 * append. Returns numbers in [0, 1) with 8 bits of entropy each, as `ulid` expects.
 */
export function pooledRandom(size = 4096): () => number {
  const pool = new Uint8Array(size);
  let at = size;
  return () => {
    if (at === size) {
      randomFillSync(pool);
      at = 0;
    }
    return pool[at++]! / 256;
  };
}
