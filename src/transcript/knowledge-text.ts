/** Markdown helpers for the knowledge file: deterministic, no locale, no clock. */

/** `text` as inline code, with a backtick fence longer than any run inside it. */
export function code(text: string): string {
  const run = longestRun(text, "`");
  const fence = "`".repeat(run + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${oneLine(text)}${pad}${fence}`;
}

/** A fenced block of `text` (fence longer than any backtick run inside it). */
export function fenced(text: string, language = ""): string {
  const fence = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}

/** `text` fit for one table cell or list line: one line, pipes escaped. */
export function cell(text: string): string {
  return oneLine(text).replace(/\|/g, "\\|");
}

/** `text` on one line, at most `max` characters (an ellipsis marks a cut). */
export function oneLine(text: string, max = 500): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `1234` → `1.2 s`; `80` → `80 ms`; `75000` → `1 min 15 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function longestRun(text: string, char: string): number {
  let longest = 0;
  let current = 0;
  for (const c of text) {
    current = c === char ? current + 1 : 0;
    if (current > longest) longest = current;
  }
  return longest;
}
