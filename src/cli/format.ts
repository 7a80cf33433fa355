import type { SpoolEvent } from "../spec/index.js";

/** Something the CLI writes to: `process.stdout`, `process.stderr`, or a test double. */
export interface CliOutput {
  write(chunk: string): unknown;
  /** True for a terminal; colour and terminal-width truncation apply only then. */
  isTTY?: boolean;
  /** Terminal width in columns (0 or absent when unknown). */
  columns?: number;
}

/** ANSI styling that turns into plain text when colour is off. */
export interface Style {
  readonly enabled: boolean;
  dim(text: string): string;
  bold(text: string): string;
  italic(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

/**
 * Whether to colour what goes to `output`: only a terminal, and never with `NO_COLOR` set to
 * anything non-empty (https://no-color.org) or `TERM=dumb`.
 */
export function colorEnabled(output: CliOutput, env: Record<string, string | undefined>): boolean {
  return output.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
}

/** A `Style` that colours when `enabled`, and returns text unchanged otherwise. */
export function createStyle(enabled: boolean): Style {
  const sgr = (open: number, close: number) => (text: string) =>
    enabled && text !== "" ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    enabled,
    dim: sgr(2, 22),
    bold: sgr(1, 22),
    italic: sgr(3, 23),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    magenta: sgr(35, 39),
  };
}

/**
 * How wide a line may be: the terminal's width on a TTY, else `$COLUMNS`, else 80 on a terminal
 * that does not report its size and 160 when writing to a pipe or file.
 */
export function outputWidth(output: CliOutput, env: Record<string, string | undefined>): number {
  if (output.isTTY && output.columns && output.columns > 0) return output.columns;
  const columns = Number(env.COLUMNS);
  if (Number.isInteger(columns) && columns > 0) return columns;
  return output.isTTY ? 80 : 160;
}

/** An event time as `2026-01-31T12:00:05Z` (UTC, whole seconds); unparsable text is kept. */
export function formatTime(ts: string): string {
  const time = Date.parse(ts);
  if (Number.isNaN(time)) return oneLine(ts);
  return `${new Date(time).toISOString().slice(0, 19)}Z`;
}

/**
 * Text made safe for one terminal line: runs of whitespace (newlines included) become one space
 * and control characters (which could drive the terminal) are dropped.
 */
export function oneLine(text: string): string {
  return (
    text
      .replace(/[\s\u2028\u2029]+/g, " ")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
      .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")
      .trim()
  );
}

/** `text` cut to at most `width` characters, ending in `…` when cut. */
export function truncate(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  if (width <= 1) return "…".slice(0, Math.max(0, width));
  return `${chars.slice(0, width - 1).join("")}…`;
}

/** `count` with `one` or `many`: `1 event`, `3 events`. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** A hash shortened for tables. */
export function shortHash(hash: string): string {
  return hash.slice(0, 12);
}

/** The stream an event belongs to: `continuity`, or `kind:id` for threads, steps and the rest. */
export function formatStream(stream: SpoolEvent["stream"]): string {
  return stream.kind === "continuity" ? "continuity" : oneLine(`${stream.kind}:${stream.id}`);
}

/**
 * A short, single-line rendering of an event's `data` for its type: the text of a turn, the
 * title of a continuity, the reason a thread stopped. Unknown types show their data as JSON.
 */
export function summarize(event: SpoolEvent): string {
  const data = (typeof event.data === "object" && event.data !== null ? event.data : {}) as Record<
    string,
    unknown
  >;
  const text = (key: string): string | undefined =>
    typeof data[key] === "string" ? (data[key] as string) : undefined;
  const parts = (...items: (string | false | undefined)[]) =>
    items.filter((item): item is string => typeof item === "string" && item !== "").join(" ");
  switch (event.type) {
    case "continuity.created":
      return parts(
        text("title") !== undefined ? `"${text("title")}"` : "(untitled)",
        text("workspace") !== undefined && `in ${text("workspace")}`,
        event.actor !== null && `by ${event.actor}`,
      );
    case "continuity.archived":
      return text("reason") ?? "archived";
    case "turn.added": {
      const attachments = Array.isArray(data.attachments) ? data.attachments.length : 0;
      return parts(
        `${event.actor ?? "?"}:`,
        text("text"),
        attachments > 0 && `(+${attachments} attachment${attachments === 1 ? "" : "s"})`,
      );
    }
    case "actor.added":
      return parts(text("actor_id"), `(${text("kind")}, ${text("access")})`, text("name"));
    case "actor.removed":
      return parts(text("actor_id"), text("reason") !== undefined && `: ${text("reason")}`);
    case "thread.started":
      return parts(
        text("directive"),
        text("model") !== undefined && `[${text("model")}]`,
        text("continuation_of") !== undefined && `continues ${text("continuation_of")}`,
      );
    case "thread.suspended":
    case "thread.resumed":
    case "thread.cancelled":
      return text("reason") ?? "";
    case "thread.completed":
      return text("result") ?? "completed";
    case "thread.failed":
      return `${text("code")}: ${text("message") ?? ""}`;
    case "thread.continued":
      return `→ ${text("continuation")}: ${text("reason") ?? ""}`;
    case "artifact.stored":
      return `${text("name") ?? shortHash(text("hash") ?? "")} (${text("media_type")}, ${formatBytes(Number(data.size))})`;
    case "token.delta":
      return `[${text("block")}] ${text("text") ?? ""}`;
    default:
      return JSON.stringify(event.data) ?? "";
  }
}

function formatBytes(size: number): string {
  if (!Number.isFinite(size)) return "? B";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Options of `formatEventLine`. */
export interface EventLineOptions {
  style: Style;
  /** The whole line fits in this many columns; the summary is truncated to what is left. */
  width: number;
  /** Adds the continuity id as a column (for output spanning several continuities). */
  showContinuity?: boolean;
}

const TYPE_WIDTH = 19;

/** One event as `seq  time  type  stream  summary`, fitted to `width`. */
export function formatEventLine(event: SpoolEvent, options: EventLineOptions): string {
  const { style } = options;
  const cells = [
    String(event.seq).padStart(6),
    formatTime(event.ts),
    ...(options.showContinuity ? [oneLine(event.continuity).padEnd(12)] : []),
    oneLine(event.type).padEnd(TYPE_WIDTH),
    formatStream(event.stream).padEnd(10),
  ];
  const prefix = cells.join("  ");
  const room = Math.max(20, options.width - Array.from(prefix).length - 2);
  const summary = truncate(oneLine(summarize(event)), room);
  const styled = [
    style.dim(cells[0]!),
    style.dim(cells[1]!),
    ...(options.showContinuity ? [cells[2]!] : []),
    typeColor(event.type, style)(cells.at(-2)!),
    style.dim(cells.at(-1)!),
  ];
  return `${styled.join("  ")}  ${summary}`.trimEnd();
}

function typeColor(type: string, style: Style): (text: string) => string {
  if (type.endsWith(".failed")) return style.red;
  if (type.startsWith("turn.")) return style.cyan;
  if (type.startsWith("continuity.") || type.startsWith("actor.")) return style.green;
  if (type.startsWith("thread.")) return style.yellow;
  return style.magenta;
}

/** A table with one header row; columns listed in `right` are right-aligned. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  style: Style,
  right: readonly number[] = [],
): string {
  const widths = headers.map((header, column) =>
    Math.max(Array.from(header).length, ...rows.map((row) => Array.from(row[column] ?? "").length)),
  );
  const line = (cells: readonly string[], paint: (text: string) => string) =>
    cells
      .map((cell, column) => {
        const pad = " ".repeat(widths[column]! - Array.from(cell).length);
        return paint(right.includes(column) ? pad + cell : cell + pad);
      })
      .join("  ")
      .trimEnd();
  return [line(headers, style.bold), ...rows.map((row) => line(row, (text) => text))]
    .map((text) => `${text}\n`)
    .join("");
}
