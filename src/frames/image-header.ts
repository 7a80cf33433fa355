import type { FrameMime } from "./frame-types.js";

/** What the first bytes of an encoded image say: its encoding and, where cheap to read, its size. */
export interface ImageHeader {
  mime: FrameMime;
  /** Undefined when the header does not say (WebP, a JPEG cut before its frame header). */
  width?: number;
  height?: number;
}

/**
 * Reads an image's encoding from its magic bytes, and its size from the JPEG frame header
 * (SOFn) or the PNG IHDR chunk, without decoding anything. Undefined when the bytes are not a
 * JPEG, PNG or WebP image.
 */
export function readImageHeader(data: Uint8Array): ImageHeader | undefined {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) {
    return { mime: "image/jpeg", ...jpegSize(data) };
  }
  if (data.length >= 24 && data[0] === 0x89 && data[1] === 0x50 && data[2] === 0x4e) {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    return { mime: "image/png", width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (data.length >= 12 && ascii(data, 0, 4) === "RIFF" && ascii(data, 8, 12) === "WEBP") {
    return { mime: "image/webp" };
  }
  return undefined;
}

function ascii(data: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...data.subarray(from, to));
}

/** Walks the JPEG's marker segments to its first SOFn (baseline, progressive, lossless…). */
function jpegSize(data: Uint8Array): { width?: number; height?: number } {
  let at = 2;
  while (at + 9 < data.length) {
    if (data[at] !== 0xff) return {};
    const marker = data[at + 1]!;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    const length = (data[at + 2]! << 8) | data[at + 3]!;
    const isFrame =
      marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      return {
        height: (data[at + 5]! << 8) | data[at + 6]!,
        width: (data[at + 7]! << 8) | data[at + 8]!,
      };
    }
    if (marker === 0xda || length < 2) return {};
    at += 2 + length;
  }
  return {};
}
