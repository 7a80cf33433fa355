import type { Style } from "../format.js";
import { sanitizeText } from "./terminal-text.js";

/** Options of `createThoughtStream`. */
export interface ThoughtStreamOptions {
  style: Style;
  /** Written once, on its own line, before the first visible text (`· thinking`). */
  marker: string;
  /** Receives the rendered text, possibly ending mid-line. */
  write(text: string): void;
}

/** Plain text streamed dimmed and indented, as the chat shows a model's thoughts. */
export interface ThoughtStream {
  push(text: string): void;
  /** Ends the last line; writes nothing when the block had no visible text. */
  end(): void;
}

/**
 * A `ThoughtStream`: every piece of text is written dimmed as soon as it arrives (no markdown),
 * each line indented by two spaces. Whitespace before the first visible character and after the
 * last is dropped and runs of blank lines show as one; control characters are removed.
 */
export function createThoughtStream(options: ThoughtStreamOptions): ThoughtStream {
  const { style, write } = options;
  let started = false;
  let midLine = false;
  let blanks = 0;
  let spaces = "";

  const piece = (text: string) => {
    if (text === "") return;
    if (!midLine && text.trim() === "") {
      spaces += text;
      return;
    }
    let out = "";
    if (!started) out += `${style.dim(options.marker)}\n`;
    else if (!midLine && blanks > 0) out += "\n";
    if (!midLine) out += `  ${style.dim(started ? spaces : "")}`;
    out += style.dim(started || midLine ? text : text.trimStart());
    write(out);
    started = true;
    midLine = true;
    blanks = 0;
    spaces = "";
  };

  return {
    push(text) {
      sanitizeText(text)
        .split("\n")
        .forEach((part, index) => {
          if (index > 0) {
            if (midLine) write("\n");
            else if (started) blanks += 1;
            midLine = false;
            spaces = "";
          }
          piece(part);
        });
    },
    end() {
      if (midLine) write("\n");
      midLine = false;
    },
  };
}
