import type { SourceCursor, SourceJson } from "./source-types.js";

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const HEX_PREFIXED = /\b0x[0-9a-f]+\b/gi;
/** A run of 6+ hex digits holding both a digit and a letter: hashes, ids, addresses. */
const HEX_RUN = /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b/gi;
const DIGITS = /\d+/g;

/** Shapes are compared on at most this many characters. */
const SHAPE_CHARS = 240;

/**
 * The shape of a log line: UUIDs, hex ids and numbers replaced by placeholders, so that
 * `GET /items/17 503 12ms` and `GET /items/9 503 40ms` are one shape (`GET /items/# # #ms`).
 */
export function lineShape(line: string): string {
  return line
    .slice(0, SHAPE_CHARS * 2)
    .replace(UUID, "<uuid>")
    .replace(HEX_PREFIXED, "<hex>")
    .replace(HEX_RUN, "<hex>")
    .replace(DIGITS, "#")
    .trim()
    .slice(0, SHAPE_CHARS);
}

/** One shape among some lines: how many had it, and its first line with that line's chunk. */
export interface LineShape {
  shape: string;
  count: number;
  example: string;
  chunk: number;
  /** Order of first appearance. */
  first: number;
}

/** The shapes of `lines` (with their chunk numbers), rarest first, then in order of appearance. */
export function rarestShapes(lines: Iterable<{ line: string; chunk: number }>): LineShape[] {
  const shapes = new Map<string, LineShape>();
  for (const { line, chunk } of lines) {
    const shape = lineShape(line);
    const found = shapes.get(shape);
    if (found) found.count++;
    else shapes.set(shape, { shape, count: 1, example: line, chunk, first: shapes.size });
  }
  return [...shapes.values()].sort((a, b) => a.count - b.count || a.first - b.first);
}

/** `line` cut to `max` characters, saying how many were left out. */
export function clipLine(line: string, max = 300): string {
  return line.length > max ? `${line.slice(0, max)}…(+${line.length - max} chars)` : line;
}

function compactValue(value: SourceJson): string {
  if (typeof value !== "string") return JSON.stringify(value);
  // A long token (a content hash, an id) says little to a reader: its start is enough.
  if (/^[^\s"=]{33,}$/.test(value)) return `${value.slice(0, 12)}…`;
  return /^[^\s"=]{1,32}$/.test(value) ? value : JSON.stringify(value);
}

/**
 * A cursor on one line, numbers first (a position reads best): `offset=1000 file=app.log`, a
 * long token shortened to its start (`head=f7e0549c695e…`); at most `max` characters.
 */
export function compactCursor(cursor: SourceCursor, max = 120): string {
  const entries = Object.entries(cursor);
  const text = [
    ...entries.filter(([, value]) => typeof value === "number"),
    ...entries.filter(([, value]) => typeof value !== "number"),
  ]
    .map(([key, value]) => `${key}=${compactValue(value)}`)
    .join(" ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text || "{}";
}

/** A byte count for people: `512 B`, `64.0 KiB`, `3.2 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
