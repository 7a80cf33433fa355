import { StoreError } from "../spec/index.js";
import type { ByteRange } from "./artifact-store.js";

const HASH = /^[0-9a-f]{64}$/;

/** Rejects anything that is not a lowercase hex sha256. */
export function checkArtifactHash(hash: string): void {
  if (typeof hash !== "string" || !HASH.test(hash)) {
    throw new StoreError("artifact.bad-hash", `${JSON.stringify(hash)} is not an artifact hash`, {
      hint: "Pass the 64-character lowercase hex sha256 returned by put()",
    });
  }
}

/** Resolves a range against an artifact's size: `[start, end)`, clipped to the artifact. */
export function resolveRange(
  range: ByteRange | undefined,
  size: number,
): { start: number; end: number } {
  const offset = range?.offset ?? 0;
  const length = range?.length ?? Number.POSITIVE_INFINITY;
  if (
    !Number.isInteger(offset) ||
    offset < 0 ||
    !(Number.isInteger(length) || length === Number.POSITIVE_INFINITY) ||
    length < 0
  ) {
    throw new StoreError(
      "artifact.bad-range",
      `bad byte range offset=${range?.offset} length=${range?.length}`,
      {
        hint: "Use a non-negative integer offset and length",
      },
    );
  }
  const start = Math.min(offset, size);
  return { start, end: Math.min(size, start + length) };
}

/** The error for a hash the store does not hold. */
export function artifactNotFound(hash: string): StoreError {
  return new StoreError("artifact.not-found", `no artifact ${hash} in this store`, {
    hint: "Check the hash, or put() the content first",
  });
}
