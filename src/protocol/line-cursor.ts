import type { SourcePosition } from "./action-request.js";

/**
 * Turns indexes of the text a parser is scanning into output positions (UTF-16 offset, 1-based
 * line and column; a line ends at `\n`). It counts the line breaks of everything consumed once,
 * moving forward, so a position costs only the text since the last one.
 */
export class LineCursor {
  /** Offset, line and line start (as an offset) where the next scanned text begins. */
  private offset = 0;
  private line = 1;
  private lineStart = 0;
  /** The text being scanned, its offset, and where the cursor is in it. */
  private s = "";
  private base = 0;
  private idx = 0;
  private curLine = 1;
  private curLineStart = 0;
  /** The first `\n` at or after `idx` (-1: none; -2: not looked for yet). */
  private nextNl = -2;

  /** Starts on `s`, which begins where the consumed text ends. */
  begin(s: string): void {
    this.s = s;
    this.base = this.offset;
    this.idx = 0;
    this.curLine = this.line;
    this.curLineStart = this.lineStart;
    this.nextNl = -2;
  }

  /** The position of index `index` of the text begun. */
  pos(index: number): SourcePosition {
    this.seek(index);
    const offset = this.base + index;
    return { offset, line: this.curLine, column: offset - this.curLineStart + 1 };
  }

  /** Consumes the text begun up to `index`; the next text begins there. */
  commit(index: number): void {
    this.seek(index);
    this.offset = this.base + index;
    this.line = this.curLine;
    this.lineStart = this.curLineStart;
  }

  /** Consumes `chunk` whole without beginning on it (for text that needs no positions). */
  skip(chunk: string): void {
    let nl = chunk.indexOf("\n");
    if (nl !== -1) {
      let line = this.line;
      let last = nl;
      for (; nl !== -1; nl = chunk.indexOf("\n", nl + 1)) {
        line++;
        last = nl;
      }
      this.line = line;
      this.lineStart = this.offset + last + 1;
    }
    this.offset += chunk.length;
  }

  /** Moves to `index`, counting the line breaks it passes. */
  private seek(index: number): void {
    if (index < this.idx) {
      // Rare (positions asked for out of order): count again from the start of the text.
      this.idx = 0;
      this.curLine = this.line;
      this.curLineStart = this.lineStart;
      this.nextNl = -2;
    }
    const s = this.s;
    let nl = this.nextNl === -2 ? s.indexOf("\n", this.idx) : this.nextNl;
    if (nl !== -1 && nl < index) {
      let line = this.curLine;
      let last = nl;
      for (; nl !== -1 && nl < index; nl = s.indexOf("\n", nl + 1)) {
        line++;
        last = nl;
      }
      this.curLine = line;
      this.curLineStart = this.base + last + 1;
    }
    this.nextNl = nl;
    this.idx = index;
  }
}
