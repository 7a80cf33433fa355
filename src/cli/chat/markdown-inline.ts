import type { Style } from "../format.js";

/** A styling function of `Style` (`style.bold`, `style.cyan`, …). */
export type Paint = (text: string) => string;

/** One inline piece of a line: it covers the line up to `end` (exclusive) and shows as `text`. */
export interface InlineToken {
  end: number;
  text: string;
}

const SPECIAL = /[\\`*_[]/;
const PUNCTUATION = /^[!-/:-@[-`{-~]$/;
const WORD = /^[\p{L}\p{N}]$/u;
const SPACE = /^\s$/;

/**
 * The inline markdown token of `line` that starts at `start`: plain text, a `\` escape,
 * `` `code` `` (cyan; with its backticks when colour is off), `*italic*`/`_italic_`,
 * `**bold**`, `***both***`, or `[text](url)` (the text, then the url dimmed in parentheses).
 *
 * Contract: when `complete` is false (more of the line may follow) it returns `undefined` for a
 * token that later text could still change — an opening marker whose closer has not arrived,
 * a run of markers that may grow — and otherwise exactly the token it would return for the whole
 * line. That is what makes streamed rendering identical under any chunking. A complete line
 * always yields a token; an unclosed marker is then shown as written. `paints` wrap every piece
 * of text (outermost first), so each token is self-contained: its escape codes open and close
 * inside it.
 */
export function nextInlineToken(
  line: string,
  start: number,
  complete: boolean,
  style: Style,
  paints: readonly Paint[] = [],
): InlineToken | undefined {
  const plain = (end: number): InlineToken => ({
    end,
    text: paint(line.slice(start, end), paints),
  });
  const char = line[start];
  if (char === "\\") {
    const next = line[start + 1];
    if (next === undefined) return complete ? plain(start + 1) : undefined;
    return PUNCTUATION.test(next)
      ? { end: start + 2, text: paint(next, paints) }
      : plain(start + 1);
  }
  if (char === "`") return codeSpan(line, start, complete, style, paints);
  if (char === "*" || char === "_") return emphasis(line, start, complete, style, paints);
  if (char === "[") return link(line, start, complete, style, paints);
  let end = start + 1;
  while (end < line.length && !SPECIAL.test(line[end]!)) end += 1;
  return plain(end);
}

/** A whole line's inline markdown rendered (see `nextInlineToken`). */
export function renderInline(text: string, style: Style, paints: readonly Paint[] = []): string {
  let out = "";
  let at = 0;
  while (at < text.length) {
    const token = nextInlineToken(text, at, true, style, paints)!;
    out += token.text;
    at = token.end;
  }
  return out;
}

function paint(text: string, paints: readonly Paint[]): string {
  let out = text;
  for (let index = paints.length - 1; index >= 0; index -= 1) out = paints[index]!(out);
  return out;
}

function runEnd(line: string, start: number): number {
  let end = start;
  while (line[end] === line[start]) end += 1;
  return end;
}

function codeSpan(
  line: string,
  start: number,
  complete: boolean,
  style: Style,
  paints: readonly Paint[],
): InlineToken | undefined {
  const open = runEnd(line, start);
  if (open === line.length && !complete) return undefined;
  const size = open - start;
  let at = open;
  for (;;) {
    const close = line.indexOf("`", at);
    if (close === -1) {
      return complete ? { end: open, text: paint(line.slice(start, open), paints) } : undefined;
    }
    const end = runEnd(line, close);
    if (end === line.length && !complete) return undefined;
    if (end - close === size) {
      let code = line.slice(open, close);
      if (code.length >= 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim() !== "") {
        code = code.slice(1, -1);
      }
      const shown = style.enabled ? code : line.slice(start, end);
      return { end, text: paint(shown, [...paints, style.cyan]) };
    }
    at = end;
  }
}

function emphasis(
  line: string,
  start: number,
  complete: boolean,
  style: Style,
  paints: readonly Paint[],
): InlineToken | undefined {
  const marker = line[start]!;
  const open = runEnd(line, start);
  if (open === line.length && !complete) return undefined;
  const literal: InlineToken = { end: open, text: paint(line.slice(start, open), paints) };
  const size = open - start;
  const intraword = marker === "_" && start > 0 && WORD.test(line[start - 1]!);
  if (intraword || size > 3 || open === line.length || SPACE.test(line[open]!)) return literal;
  let at = open;
  for (;;) {
    const close = line.indexOf(marker, at);
    if (close === -1) return complete ? literal : undefined;
    const end = runEnd(line, close);
    if (end === line.length && !complete) return undefined;
    const closes =
      end - close === size &&
      !SPACE.test(line[close - 1]!) &&
      (marker === "*" || end === line.length || !WORD.test(line[end]!));
    if (closes) {
      const added =
        size === 1 ? [style.italic] : size === 2 ? [style.bold] : [style.bold, style.italic];
      return { end, text: renderInline(line.slice(open, close), style, [...paints, ...added]) };
    }
    at = end;
  }
}

function link(
  line: string,
  start: number,
  complete: boolean,
  style: Style,
  paints: readonly Paint[],
): InlineToken | undefined {
  const literal: InlineToken = { end: start + 1, text: paint("[", paints) };
  const labelEnd = line.indexOf("]", start + 1);
  if (labelEnd === -1 || labelEnd + 1 >= line.length) return complete ? literal : undefined;
  if (line[labelEnd + 1] !== "(") return literal;
  const urlEnd = line.indexOf(")", labelEnd + 2);
  if (urlEnd === -1) return complete ? literal : undefined;
  const url = line.slice(labelEnd + 2, urlEnd);
  if (url === "" || /\s/.test(url)) return literal;
  const label = line.slice(start + 1, labelEnd);
  const shownUrl = paint(`(${url})`, [...paints, style.dim]);
  const text =
    label.trim() === "" || label === url
      ? paint(url, paints)
      : `${renderInline(label, style, paints)}${paint(" ", paints)}${shownUrl}`;
  return { end: urlEnd + 1, text };
}
