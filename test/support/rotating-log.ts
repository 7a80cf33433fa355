/**
 * A log file written the way a real service writes one, with real rotation, for the proofs that
 * a file source reads every line once across rotations and crashes. It appends numbered lines
 * (`L0000042 <a realistic log line>`), sometimes only the first part of a line (the rest comes
 * with the next write), and rotates the file either way logrotate does:
 *
 * - `renameRotate`: renames the file to `<name>.<k>` (k = 1, 2, …; never deleted, as a reader
 *   that was behind finds its file again by inode), the writer finishes the line it was writing
 *   and any late lines in the renamed file (it still has it open), then creates the file anew.
 * - `copyTruncate`: copies the file to `<name>.<k>` and truncates it in place; the writer (with
 *   `O_APPEND`) goes on at offset 0. A line half written at that moment is cut in two: its first
 *   part is only in the copy, so the first part is `optional` in what a reader of the path can see.
 *
 * `expected` is every line a reader of the path should deliver, in order. The writer knows where
 * its whole lines end in the current file (`wholeEnd`) and the file's inode, so a test can tell
 * when a reader has durably reached the end (see `canCopyTruncate`).
 */
import {
  appendFileSync,
  copyFileSync,
  renameSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { logLines } from "./log-lines.js";

/** A line a reader should deliver; `optional`: it may be missing (cut off by copytruncate). */
export interface ExpectedLine {
  text: string;
  optional?: boolean;
}

/** Where a reader durably stands: the inode it reads and the offset after its last whole line. */
export interface ReaderPosition {
  ino: string;
  offset: number;
}

export class RotatingLog {
  readonly path: string;
  readonly expected: ExpectedLine[] = [];
  /** What the writer did, one line per move (for a failure's report). */
  readonly journal: string[] = [];
  /** Rotations done, by kind. */
  readonly rotations = { renamed: 0, truncated: 0, midLine: 0 };
  #texts: Iterator<{ text: string }>;
  #number = 0;
  /** The line being written: its text and how much of it is in the file already. */
  #partial: { text: string; written: number } | undefined;
  #kept = 0;
  /** A copytruncate the reader has not durably noticed yet. */
  #unseenTruncation = false;
  /** Bytes of whole lines in the current file. */
  #wholeEnd = 0;
  #ino: string;

  constructor(path: string, seed: number) {
    this.path = path;
    this.#texts = logLines({ seed, count: Number.MAX_SAFE_INTEGER, burstAt: 500 })[
      Symbol.iterator
    ]();
    writeFileSync(this.path, "");
    this.#ino = inodeOf(this.path);
  }

  /** The current file's inode (decimal, as file cursors hold it). */
  get ino(): string {
    return this.#ino;
  }

  /** Whether a line is half written. */
  get midLine(): boolean {
    return this.#partial !== undefined;
  }

  /** Appends `count` whole lines (finishing the half-written one first, as one of them). */
  append(count: number): void {
    let text = "";
    for (let index = 0; index < count; index++) {
      if (this.#partial) {
        text += `${this.#partial.text.slice(this.#partial.written)}\n`;
        this.expected.push({ text: this.#partial.text });
        this.#partial = undefined;
        continue;
      }
      const line = this.#nextLine();
      text += `${line}\n`;
      this.expected.push({ text: line });
    }
    this.#write(this.path, text);
    this.#wholeEnd = statSync(this.path).size - this.#partialBytes();
    this.journal.push(
      `append ${count} to line ${this.#number}, whole lines end at ${this.#wholeEnd}`,
    );
  }

  /** Writes the first part of the next line (cut at `fraction` of it), no newline. */
  appendPartial(fraction: number): void {
    if (this.#partial) return;
    const text = this.#nextLine();
    const written = Math.max(1, Math.min(text.length - 1, Math.floor(text.length * fraction)));
    this.#partial = { text, written };
    this.#write(this.path, text.slice(0, written));
    this.journal.push(`half of line ${this.#number} (${written} characters)`);
  }

  /** Appends the sentinel as the last line (finishing a half-written line first). */
  end(sentinel: string): void {
    if (this.#partial) this.append(1);
    this.#write(this.path, `${sentinel}\n`);
    this.expected.push({ text: sentinel });
  }

  /**
   * Rename rotation: the file becomes `<path>.<k>`; the writer finishes its half-written line and
   * writes `late` more lines there, then the path is created anew, empty.
   */
  renameRotate(late: number): void {
    const rotated = this.#nextName();
    renameSync(this.path, rotated);
    if (this.#partial) this.rotations.midLine += 1;
    let text = "";
    if (this.#partial) {
      text += `${this.#partial.text.slice(this.#partial.written)}\n`;
      this.expected.push({ text: this.#partial.text });
      this.#partial = undefined;
    }
    for (let index = 0; index < late; index++) {
      const line = this.#nextLine();
      text += `${line}\n`;
      this.expected.push({ text: line });
    }
    if (text !== "") appendFileSync(rotated, text);
    writeFileSync(this.path, "");
    this.#ino = inodeOf(this.path);
    this.#wholeEnd = 0;
    this.rotations.renamed += 1;
    this.journal.push(
      `renamed to ${rotated} at line ${this.#number}; the path is inode ${this.#ino}`,
    );
  }

  /**
   * Copytruncate: copies the file to `<path>.<k>` and truncates it to 0. A half-written line is
   * cut: its first part stays in the copy (optional for a reader of the path), the rest is
   * written to the truncated file as a line of its own.
   */
  copyTruncate(): void {
    const copy = this.#nextName();
    copyFileSync(this.path, copy);
    truncateSync(this.path, 0);
    this.#unseenTruncation = true;
    this.journal.push(
      `copied to ${copy} and truncated at line ${this.#number}${this.#partial ? " (mid-line)" : ""}`,
    );
    this.#wholeEnd = 0;
    this.rotations.truncated += 1;
    const partial = this.#partial;
    if (!partial) return;
    this.rotations.midLine += 1;
    this.#partial = undefined;
    const rest = partial.text.slice(partial.written);
    this.expected.push({ text: partial.text.slice(0, partial.written), optional: true });
    this.expected.push({ text: rest });
    this.#write(this.path, `${rest}\n`);
    this.#wholeEnd = statSync(this.path).size;
  }

  /** The reader durably noticed a truncation of the file `ino` (a `rotated` `truncated`). */
  truncationSeen(ino: string): void {
    if (ino === this.#ino) this.#unseenTruncation = false;
  }

  /**
   * Whether a rename rotation now is one a reader at `position` can follow: it reads the current
   * file and has noticed its last truncation. tail -F follows one rotation at a time: two before
   * the reader reached the newest file leave the one between unread by any reader; and a reader
   * that restarts after a file was truncated and then renamed cannot tell it from another file
   * that took its inode, so it does not read it.
   */
  canRename(position: ReaderPosition | undefined): boolean {
    return position?.ino === this.#ino && !this.#unseenTruncation;
  }

  /**
   * Whether a copytruncate now loses nothing for a reader at `position`: it has durably read
   * every whole line of the current file. (What it has not read when the file is truncated is
   * only in the copy: copytruncate's own window of loss, which no reader of the path can close.)
   */
  canCopyTruncate(position: ReaderPosition | undefined): boolean {
    return (
      position?.ino === this.#ino && position.offset === this.#wholeEnd && !this.#unseenTruncation
    );
  }

  /**
   * Whether a reader at `position` still has whole lines of the current file to read: it will
   * read them and say so, without more being written.
   */
  behind(position: ReaderPosition | undefined): boolean {
    return position?.ino === this.#ino && position.offset < this.#wholeEnd;
  }

  #nextLine(): string {
    this.#number += 1;
    const next = this.#texts.next();
    const text = next.done ? "" : next.value.text;
    return `L${String(this.#number).padStart(7, "0")} ${text}`;
  }

  #nextName(): string {
    this.#kept += 1;
    return `${this.path}.${this.#kept}`;
  }

  #partialBytes(): number {
    return this.#partial
      ? Buffer.byteLength(this.#partial.text.slice(0, this.#partial.written))
      : 0;
  }

  #write(path: string, text: string): void {
    if (text !== "") appendFileSync(path, text);
  }
}

function inodeOf(path: string): string {
  return String(statSync(path, { bigint: true }).ino);
}

/**
 * Where `actual` differs from `expected` (optional lines may be missing, nothing else), or
 * undefined when it is exactly the expected lines, in order, each once.
 */
export function linesProblem(
  actual: readonly string[],
  expected: readonly ExpectedLine[],
): string | undefined {
  let at = 0;
  for (const [index, line] of expected.entries()) {
    if (actual[at] === line.text) {
      at += 1;
      continue;
    }
    if (line.optional) continue;
    const around = actual.slice(Math.max(0, at - 2), at + 3).map((text) => text.slice(0, 60));
    return `expected line ${index} ${JSON.stringify(line.text.slice(0, 60))} at logged line ${at}; the log has ${JSON.stringify(around)} there`;
  }
  if (at < actual.length) {
    return `${actual.length - at} logged line(s) beyond the expected ones, first ${JSON.stringify(actual[at]!.slice(0, 60))}`;
  }
  return undefined;
}
