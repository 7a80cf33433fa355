/**
 * Model text made safe to stream to a terminal: newlines and tabs are kept; carriage returns,
 * other control characters (which could drive the terminal) and bidi overrides are dropped.
 * Works per character, so it gives the same result under any chunking.
 */
export function sanitizeText(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "");
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\u200b-\u200f]$/u;

/**
 * How many terminal columns `text` takes (no escape codes in it): combining marks take none,
 * East Asian wide characters and emoji take two, everything else one.
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += charWidth(char);
  return width;
}

function charWidth(char: string): number {
  if (ZERO_WIDTH.test(char)) return 0;
  const code = char.codePointAt(0)!;
  const wide =
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf && code !== 0x303f) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd);
  return wide ? 2 : 1;
}

/** `text` cut to at most `width` columns, ending in `…` when cut. */
export function fitWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return "";
  let out = "";
  let used = 0;
  for (const char of text) {
    const next = charWidth(char);
    if (used + next > width - 1) break;
    out += char;
    used += next;
  }
  return `${out}…`;
}

/** A piece of a line and how to paint it once it has been fitted. */
export interface LinePart {
  text: string;
  paint?: (text: string) => string;
}

/**
 * Parts joined into one line of at most `width` columns: the part that overflows is cut with
 * `…` and the parts after it are dropped; each part is painted after fitting, so escape codes
 * never count towards the width and are never cut.
 */
export function fitLine(parts: readonly LinePart[], width: number): string {
  let out = "";
  let room = width;
  for (const part of parts) {
    if (room <= 0) break;
    const text = fitWidth(part.text, room);
    room -= displayWidth(text);
    out += part.paint && text !== "" ? part.paint(text) : text;
    if (text !== part.text) break;
  }
  return out;
}
