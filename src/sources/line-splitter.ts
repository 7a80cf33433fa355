import { countInvalidUtf8, decodeUtf8, utf8CutPoint } from "./utf8-bytes.js";

const NEWLINE = 0x0a;
const RETURN = 0x0d;

/** One whole line split from a byte stream. */
export interface SplitLine {
  /** The line decoded as UTF-8 without its newline (a trailing \r removed too); each invalid byte sequence becomes U+FFFD. */
  text: string;
  /** Input bytes the line took, its newline included (so cursors are sums of these). */
  bytes: number;
  /** Bytes dropped because the line was longer than maxLineBytes (0 if none). */
  cut: number;
  /** Invalid UTF-8 bytes replaced (0 if none). */
  invalid: number;
}

/**
 * Splits a byte stream into whole lines in bounded memory: a partial last line is held (at most
 * maxLineBytes of it kept; the rest only counted) until its newline arrives or end() is called.
 *
 * Guarantees: any split of the same bytes into pushes yields the same lines (a character split
 * between pushes decodes whole, since a line is decoded only once complete); the `bytes` of all
 * lines plus `pendingBytes` always equal the input length; a cut never splits a character; the
 * bytes passed to `push` are copied, so a caller may reuse its buffer. Never throws.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  /** The kept start of the partial line: at most maxLineBytes + 1 bytes (the one to see a straddling character or a final \r). */
  #kept: Uint8Array;
  #keptLength = 0;
  #pending = 0;
  #lastByte = -1;

  /** `maxLineBytes`: the most bytes of one line kept (at least 1; fractions round down). */
  constructor(maxLineBytes: number) {
    this.#maxLineBytes = Math.max(1, Math.floor(maxLineBytes) || 1);
    this.#kept = new Uint8Array(Math.min(this.#maxLineBytes + 1, 256));
  }

  /** Splits `bytes` on; returns the lines they completed, in order. */
  push(bytes: Uint8Array): SplitLine[] {
    const lines: SplitLine[] = [];
    let start = 0;
    while (start < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.#hold(bytes, start, bytes.length);
        break;
      }
      if (this.#pending === 0 && newline - start <= this.#maxLineBytes + 1) {
        lines.push(this.#line(bytes.subarray(start, newline), newline - start, 1));
      } else {
        this.#hold(bytes, start, newline);
        lines.push(this.#takeHeld(1));
      }
      start = newline + 1;
    }
    return lines;
  }

  /** Bytes of input held for the partial line (all of it counted, though at most maxLineBytes kept). */
  get pendingBytes(): number {
    return this.#pending;
  }

  /** Bytes of memory the splitter holds for the partial line: never above maxLineBytes + 1. */
  get keptBytes(): number {
    return this.#kept.length;
  }

  /** End of input: the partial line, if any, as a last line. */
  end(): SplitLine[] {
    return this.#pending === 0 ? [] : [this.#takeHeld(0)];
  }

  /** Holds `bytes[from, to)` as more of the partial line: keeps what fits, counts the rest. */
  #hold(bytes: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    const room = this.#maxLineBytes + 1 - this.#keptLength;
    const keep = Math.min(room, to - from);
    if (keep > 0) {
      this.#reserve(this.#keptLength + keep);
      this.#kept.set(bytes.subarray(from, from + keep), this.#keptLength);
      this.#keptLength += keep;
    }
    this.#pending += to - from;
    this.#lastByte = bytes[to - 1]!;
  }

  /** Grows the kept buffer (doubling, capped at maxLineBytes + 1) to hold `size` bytes. */
  #reserve(size: number): void {
    if (size <= this.#kept.length) return;
    const grown = new Uint8Array(
      Math.min(this.#maxLineBytes + 1, Math.max(size, this.#kept.length * 2)),
    );
    grown.set(this.#kept.subarray(0, this.#keptLength));
    this.#kept = grown;
  }

  /** The held partial line as a line ending with `newline` bytes (1, or 0 at the end); resets. */
  #takeHeld(newline: number): SplitLine {
    const line = this.#line(this.#kept.subarray(0, this.#keptLength), this.#pending, newline);
    this.#keptLength = 0;
    this.#pending = 0;
    this.#lastByte = -1;
    if (this.#kept.length > 65_536) this.#kept = new Uint8Array(256);
    return line;
  }

  /**
   * A line from its kept start `kept`, its full length before the newline `length` (kept or
   * not) and the newline's size.
   */
  #line(kept: Uint8Array, length: number, newline: number): SplitLine {
    const last = kept.length === length ? (kept[length - 1] ?? -1) : this.#lastByte;
    const content = last === RETURN ? length - 1 : length;
    const limit = Math.min(content, this.#maxLineBytes);
    const end = content > limit ? utf8CutPoint(kept, limit) : content;
    const text = kept.subarray(0, end);
    return {
      text: decodeUtf8(text),
      bytes: length + newline,
      cut: content - end,
      invalid: countInvalidUtf8(text),
    };
  }
}
