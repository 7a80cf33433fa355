import { createHash } from "node:crypto";

/** A response body read whole, with its SHA-256 (hex). */
export interface BoundedBody {
  kind: "body";
  bytes: Uint8Array;
  sha256: string;
}

/** A response body over the limit: not kept; `bytes` is how much was seen before giving up. */
export interface OversizedBody {
  kind: "too-large";
  bytes: number;
}

/**
 * Reads `response`'s body, at most `maxBytes` of it (after content decoding), hashing as it goes.
 * A declared `Content-Length` over the limit is refused before reading; a body that grows past it
 * is cancelled at that point (its connection closed), so memory stays within `maxBytes`. Rejects
 * only when the transfer itself fails (a connection cut mid-body, the signal aborted).
 */
export async function readBoundedBody(
  response: Response,
  maxBytes: number,
): Promise<BoundedBody | OversizedBody> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: "too-large", bytes: declared };
  }
  const hash = createHash("sha256");
  const parts: Uint8Array[] = [];
  let total = 0;
  if (response.body !== null) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return { kind: "too-large", bytes: total };
      }
      hash.update(value);
      parts.push(value);
    }
  }
  return { kind: "body", bytes: Buffer.concat(parts, total), sha256: hash.digest("hex") };
}
