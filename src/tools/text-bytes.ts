/** How many leading bytes are inspected to tell text from binary. */
export const SNIFF_BYTES = 8192;

/**
 * Whether `sample` (the start of a file or body) looks binary: it holds a NUL byte or is not
 * valid UTF-8 (a character cut at the end of the sample is allowed).
 */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(sample, { stream: true });
    return false;
  } catch {
    return true;
  }
}

/** The largest index `<= end` that does not fall inside a UTF-8 character of `bytes`. */
export function utf8Boundary(bytes: Uint8Array, end: number): number {
  let index = Math.min(end, bytes.length);
  while (index > 0 && index < bytes.length && (bytes[index]! & 0xc0) === 0x80) index -= 1;
  return index;
}

/** `bytes` as text, cut to at most `max` bytes on a character boundary. */
export function decodeCapped(
  bytes: Uint8Array,
  max: number,
): { text: string; bytes: number; truncated: boolean } {
  const end = bytes.length > max ? utf8Boundary(bytes, max) : bytes.length;
  return {
    text: new TextDecoder("utf-8").decode(bytes.subarray(0, end)),
    bytes: end,
    truncated: end < bytes.length,
  };
}
