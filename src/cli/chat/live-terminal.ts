import type { CliOutput } from "../format.js";

/**
 * The screen of a chat: streamed text flows from the top, whole lines (action results, status)
 * are printed into that flow, and on a terminal a small live region of lines (actions in flight)
 * stays at the bottom, redrawn in place.
 */
export interface LiveTerminal {
  /** Streamed text, possibly ending mid-line. */
  text(chunk: string): void;
  /**
   * Whole lines printed into the flow (each gets its newline). A partial line of streamed text is
   * not broken: the lines wait for its end (the next newline, `startLine` or `settle`), so an
   * action that ends while a response is mid-sentence shows after that line. With `region`, the
   * live region is replaced at once.
   */
  lines(lines: readonly string[], region?: readonly string[]): void;
  /** Replaces the live region; outside a terminal it is never shown. */
  setLive(lines: readonly string[]): void;
  /** Ends a partial line of the flow, so what follows starts at the first column. */
  startLine(): void;
  /** Removes the live region and ends a partial line: the cursor is left at a line start. */
  settle(): void;
}

/**
 * A `LiveTerminal` on `output`. With `live` false (not a terminal) it writes plain text only:
 * no cursor movement, and the live region is ignored.
 *
 * How the region stays correct: it is drawn only from a line start, each of its lines ends in a
 * newline, and it is erased by moving the cursor up over it and clearing to the end of the
 * screen. While it is shown, streamed text is held back until its line is complete, then
 * written above the region, which is redrawn below it. Lines must be narrower than the terminal
 * (the caller fits them) so that none wraps. Writes to `output` are never split mid-sequence.
 */
export function createLiveTerminal(output: CliOutput, live: boolean): LiveTerminal {
  let region: readonly string[] = [];
  let drawn = 0;
  let midLine = false;
  let held = "";
  /** Lines printed while a partial line was open, written once it ends (with their newlines). */
  let waiting = "";

  const write = (text: string) => {
    if (text !== "") output.write(text);
  };
  const erase = () => {
    const sequence = drawn > 0 ? `\x1b[${drawn}A\r\x1b[J` : "";
    drawn = 0;
    return sequence;
  };
  const draw = () => {
    drawn = region.length;
    return region.map((line) => `\x1b[2K${line}\n`).join("");
  };
  const shown = () => live && region.length > 0;

  /** The waiting lines, taken. */
  const takeWaiting = () => {
    const body = waiting;
    waiting = "";
    return body;
  };
  /** `text` with the waiting lines after its first line's end (as it is when it has none). */
  const afterFirstLine = (text: string) => {
    const first = text.indexOf("\n") + 1;
    if (first === 0 || waiting === "") return text;
    return text.slice(0, first) + takeWaiting() + text.slice(first);
  };
  const text = (chunk: string) => {
    if (chunk === "") return;
    if (!shown()) {
      write(afterFirstLine(chunk));
      midLine = !chunk.endsWith("\n");
      return;
    }
    held += chunk;
    const cut = held.lastIndexOf("\n");
    if (cut === -1) return;
    const done = held.slice(0, cut + 1);
    held = held.slice(cut + 1);
    write(erase() + afterFirstLine(done) + draw());
  };
  const startLine = () => {
    if (held !== "") text("\n");
    else if (midLine || waiting !== "") write((midLine ? "\n" : "") + takeWaiting());
    midLine = false;
  };
  const setLive = (lines: readonly string[]) => {
    if (!live) return;
    const before = region.length;
    region = [...lines];
    if (region.length === 0) {
      write(erase() + held);
      if (held !== "") midLine = true;
      held = "";
      return;
    }
    const lead = before === 0 && midLine ? "\n" : "";
    if (lead !== "") midLine = false;
    const up = drawn > 0 ? `\x1b[${drawn}A\r` : "";
    const leftover = drawn > region.length ? "\x1b[J" : "";
    write(lead + up + draw() + leftover);
  };

  return {
    text,
    startLine,
    setLive,
    settle() {
      setLive([]);
      startLine();
    },
    lines(lines, next = region) {
      const body = lines.map((line) => `${line}\n`).join("");
      if (held !== "" || midLine) {
        // A partial line is open: the lines wait for its end; the region changes now.
        waiting += body;
        if (next !== region) setLive(next);
        return;
      }
      if (!live || (region.length === 0 && next.length === 0)) {
        write(body);
        return;
      }
      const before = erase();
      region = [...next];
      write(before + body + draw());
    },
  };
}
