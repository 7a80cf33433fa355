/**
 * UTF-8 at the byte level, for cutting and decoding lines: where a character may be cut, how many
 * bytes are invalid. Pure; never throws.
 */

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/**
 * Bytes in `bytes` that are not part of a well-formed UTF-8 sequence (Unicode Table 3-7). Counts
 * the way `TextDecoder` replaces: each maximal invalid subpart becomes one U+FFFD, and every byte
 * of it is counted here.
 */
export function countInvalidUtf8(bytes: Uint8Array): number {
  let invalid = 0;
  let index = 0;
  const length = bytes.length;
  while (index < length) {
    const lead = bytes[index]!;
    if (lead < 0x80) {
      index++;
      continue;
    }
    const size = sequenceLength(lead);
    if (size === 0) {
      invalid++;
      index++;
      continue;
    }
    let end = index + 1;
    while (end < index + size && end < length && continues(lead, end - index, bytes[end]!)) end++;
    if (end === index + size) index = end;
    else {
      invalid += end - index;
      index = end;
    }
  }
  return invalid;
}

/** The length of the sequence a lead byte begins (2–4), or 0 when it cannot begin one. */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** Whether `byte` may stand at position `position` (1-based after the lead) of `lead`'s sequence. */
function continues(lead: number, position: number, byte: number): boolean {
  if (position === 1) {
    if (lead === 0xe0) return byte >= 0xa0 && byte <= 0xbf;
    if (lead === 0xed) return byte >= 0x80 && byte <= 0x9f;
    if (lead === 0xf0) return byte >= 0x90 && byte <= 0xbf;
    if (lead === 0xf4) return byte >= 0x80 && byte <= 0x8f;
  }
  return byte >= 0x80 && byte <= 0xbf;
}

/**
 * Where to cut `bytes` to keep at most `limit` of them without splitting a character: `limit`
 * itself unless a well-formed multi-byte character straddles it, else that character's start.
 * `bytes` must hold at least `limit + 1` bytes for the straddle to be seen.
 */
export function utf8CutPoint(bytes: Uint8Array, limit: number): number {
  if (limit >= bytes.length) return bytes.length;
  for (let back = 1; back <= 3 && limit - back >= 0; back++) {
    const byte = bytes[limit - back]!;
    if (byte < 0x80) return limit;
    if (byte >= 0xc0) {
      const size = sequenceLength(byte);
      return size > back ? limit - back : limit;
    }
  }
  return limit;
}

/** Decodes UTF-8, each invalid sequence replaced by U+FFFD (a leading BOM kept as U+FEFF). */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
