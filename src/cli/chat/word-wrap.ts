import { displayWidth } from "./terminal-text.js";

/**
 * Wraps one line of streamed text at word boundaries: a word that would cross `width` starts a
 * new line, indented by `hanging`, instead of being cut by the terminal mid-word. A word is held
 * back until the space or line end after it arrives, so the output is the same for any chunking.
 * SGR escape sequences (`\x1b[…m`) travel with their word and take no columns. A word wider than
 * the line is written whole (the terminal folds it). Spaces where a line wraps are dropped.
 */
export interface WordWrap {
  /** Starts a line whose first `used` columns are already written (a list bullet, a quote bar). */
  start(used: number, hanging: string): void;
  /** Adds text of the current line (no newline in it). */
  write(text: string): void;
  /** Writes what is held back and ends the line. */
  endLine(): void;
}

/** A `WordWrap` writing to `write`, for lines of at most `width` columns. */
export function createWordWrap(width: number, write: (text: string) => void): WordWrap {
  let column = 0;
  let hanging = "";
  let word = "";
  let wordWidth = 0;
  let spaces = 0;
  let inEscape = false;

  const flush = () => {
    if (wordWidth === 0 && word === "") return;
    if (column + spaces + wordWidth > width && column > hanging.length && wordWidth > 0) {
      write(`\n${hanging}`);
      column = hanging.length;
      spaces = 0;
    }
    write(" ".repeat(spaces) + word);
    column += spaces + wordWidth;
    spaces = 0;
    word = "";
    wordWidth = 0;
  };

  return {
    start(used, indent) {
      column = used;
      hanging = indent;
      word = "";
      wordWidth = 0;
      spaces = 0;
      inEscape = false;
    },
    write(text) {
      for (const char of text) {
        if (inEscape) {
          word += char;
          if (/[A-Za-z]/.test(char)) inEscape = false;
        } else if (char === "\x1b") {
          word += char;
          inEscape = true;
        } else if (char === " ") {
          if (wordWidth > 0) flush();
          else if (word !== "") {
            // Escape codes alone (a colour opening before a space): keep them with the spaces.
            write(" ".repeat(spaces) + word);
            column += spaces;
            spaces = 0;
            word = "";
          }
          spaces += 1;
        } else {
          word += char;
          wordWidth += displayWidth(char);
        }
      }
    },
    endLine() {
      flush();
      write("\n");
      column = 0;
      spaces = 0;
    },
  };
}
