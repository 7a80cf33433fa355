import type { Style } from "../format.js";
import { nextInlineToken, renderInline } from "./markdown-inline.js";
import { displayWidth, sanitizeText } from "./terminal-text.js";
import { createWordWrap } from "./word-wrap.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches SGR colour codes
const SGR = /\x1b\[[0-9;]*m/g;

/** `text` without its colour codes, to measure it. */
function stripStyle(text: string): string {
  return text.replace(SGR, "");
}

/** Options of `createMarkdownStream`. */
export interface MarkdownStreamOptions {
  style: Style;
  /** Columns of the terminal; a horizontal rule is drawn to fit. */
  width: number;
  /** Receives the rendered text, possibly ending mid-line. */
  write(text: string): void;
}

/** A markdown renderer fed text as it streams. */
export interface MarkdownStream {
  /** Renders what `text` completes and holds back only what later text could still change. */
  push(text: string): void;
  /** Renders what is left as complete (an open code block is closed) and ends the last line. */
  end(): void;
}

/** How one line of markdown is shown. */
type Block =
  | { kind: "blank" }
  | { kind: "heading"; content: string }
  | { kind: "rule" }
  | { kind: "fence"; marker: string; info: string }
  | { kind: "text"; prefix: string; content: number };

/**
 * A line-based, incremental markdown renderer for a terminal: `#` headings (bold), `**bold**`,
 * `*italic*`, `` `code` `` (cyan), fenced code blocks (a dim box with the language label),
 * `-`/`*`/`+` and numbered lists, `>` quotes, rules and `[text](url)` links (text, then the url
 * dimmed). Runs of blank lines show as one; blank lines before the first and after the last
 * line are dropped; control characters in the text are removed.
 *
 * Paragraphs, list items and quotes wrap at word boundaries within `width` (a continuation line
 * is indented under the item's text); code lines in a fence are not wrapped.
 *
 * Contract: the output is byte-for-byte the same for any chunking of the same text. Only the
 * current incomplete line is held back, and of a paragraph, list item or quote only the part
 * from an unclosed inline marker on, and the word being written (until the space after it): the
 * rest of the line streams as it arrives. Headings, rules
 * and code lines show once their line is complete. It never throws on any text.
 */
export function createMarkdownStream(options: MarkdownStreamOptions): MarkdownStream {
  const { style, write } = options;
  let line = "";
  /** The current line's block once it is known; `emitted` is how much of it has been written. */
  let block: Extract<Block, { kind: "text" }> | undefined;
  let emitted = 0;
  let opened = false;
  let fence: { marker: string } | undefined;
  let started = false;
  let blankPending = false;
  // Text lines wrap at word boundaries within the width (code lines in a fence do not).
  const wrap = createWordWrap(Math.max(20, options.width - 1), write);

  const begin = () => {
    if (blankPending) write("\n");
    blankPending = false;
    started = true;
  };

  const streamText = (complete: boolean) => {
    if (!block) return;
    if (!opened) {
      begin();
      write(block.prefix);
      const used = displayWidth(stripStyle(block.prefix));
      wrap.start(used, " ".repeat(used));
      emitted = block.content;
      opened = true;
    }
    let out = "";
    while (emitted < line.length) {
      const token = nextInlineToken(line, emitted, complete, style);
      if (!token) break;
      out += token.text;
      emitted = token.end;
    }
    wrap.write(out);
    if (complete) wrap.endLine();
  };

  const completeLine = () => {
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close && close[1]![0] === fence.marker[0] && close[1]!.length >= fence.marker.length) {
        write(`${style.dim("└─")}\n`);
        fence = undefined;
      } else {
        write(`${style.dim("│")} ${line}\n`);
      }
    } else {
      const kind = block ?? classify(line, true, style)!;
      if (kind.kind === "blank") {
        blankPending = started;
      } else if (kind.kind === "text") {
        block = kind;
        streamText(true);
      } else {
        begin();
        write(`${renderWhole(kind, style, options.width)}\n`);
        if (kind.kind === "fence") fence = { marker: kind.marker };
      }
    }
    line = "";
    block = undefined;
    emitted = 0;
    opened = false;
  };

  return {
    push(text) {
      const pieces = sanitizeText(text).split("\n");
      pieces.forEach((piece, index) => {
        if (index > 0) completeLine();
        line += piece;
      });
      if (line === "" || fence) return;
      if (!block) {
        const known = classify(line, false, style);
        if (known?.kind !== "text") return;
        block = known;
      }
      streamText(false);
    },
    end() {
      if (line !== "") completeLine();
      if (fence) write(`${style.dim("└─")}\n`);
      fence = undefined;
      blankPending = false;
    },
  };
}

function renderWhole(
  kind: Exclude<Block, { kind: "blank" | "text" }>,
  style: Style,
  width: number,
) {
  switch (kind.kind) {
    case "heading":
      return renderInline(kind.content, style, [style.bold]);
    case "rule":
      return style.dim("─".repeat(Math.max(3, Math.min(width - 1, 60))));
    case "fence":
      return style.dim(kind.info === "" ? "┌─" : `┌─ ${kind.info}`);
  }
}

/**
 * How `line` shows. With `complete` false (more of the line may come) it answers only a `text`
 * block that no later text can change, and `undefined` otherwise (wait for more).
 */
function classify(line: string, complete: boolean, style: Style): Block | undefined {
  const indent = /^[ \t]*/.exec(line)![0];
  const rest = line.slice(indent.length);
  if (rest === "") return complete ? { kind: "blank" } : undefined;
  const space = rest.search(/\s/);
  const word = space === -1 ? rest : rest.slice(0, space);
  const wordDone = space !== -1 || complete;
  const first = rest[0]!;

  if (first === "`" || first === "~") {
    const run = /^(`+|~+)/.exec(rest)![0];
    if (!complete && (run.length >= 3 || run.length === rest.length)) return undefined;
    const info = rest.slice(run.length).trim();
    if (run.length >= 3 && !(first === "`" && info.includes("`"))) {
      return { kind: "fence", marker: run, info: info.split(/\s/)[0]! };
    }
  }
  if (/^#+$/.test(word) && (!wordDone || word.length <= 6)) {
    if (!complete) return undefined;
    if (word.length <= 6) {
      return {
        kind: "heading",
        content: rest
          .slice(word.length)
          .replace(/[ \t]+#+[ \t]*$/, "")
          .trim(),
      };
    }
  }
  if (/^([-*_])(?:[ \t]*\1)*[ \t]*$/.test(rest)) {
    if (!complete) return undefined;
    if (/^([-*_])(?:[ \t]*\1){2,}[ \t]*$/.test(rest)) return { kind: "rule" };
  }
  if (!wordDone && /^(?:\+|\d{1,9}[.)]?)$/.test(word)) return undefined;
  if (space !== -1 && /^[-*+]$/.test(word)) {
    const bullet = indent.length >= 2 ? "◦" : "•";
    return { kind: "text", prefix: `${indent}${bullet} `, content: indent.length + 2 };
  }
  if (space !== -1 && /^\d{1,9}[.)]$/.test(word)) {
    return { kind: "text", prefix: `${indent}${word} `, content: indent.length + word.length + 1 };
  }
  if (first === ">") {
    if (rest.length === 1 && !complete) return undefined;
    const content = indent.length + 1 + (rest[1] === " " ? 1 : 0);
    return { kind: "text", prefix: `${indent}${style.dim("│")} `, content };
  }
  return { kind: "text", prefix: "", content: 0 };
}
