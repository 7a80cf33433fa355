import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { parseFileCursor, readSourcesState, type SourceState } from "../../sources/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { formatTime, oneLine, plural, renderTable, type Style, truncate } from "../format.js";
import { redactSecrets } from "../redact.js";
import type { CommandHelp } from "../usage.js";
import { withActiveContinuity } from "./active-continuity.js";

/** The help of `spool sources`. */
export const SOURCES_USAGE: CommandHelp = {
  synopsis: "spool sources [continuity] [--json]",
  text: `Usage: spool sources [continuity] [--json]

Lists the sources of a continuity (the files, commands and feeds its agent watches): id, kind,
target, status (active, paused, removed, exhausted, failed), chunks and bytes logged, the
cursor it resumes from, its lag (chunks logged but not yet given to the agent, and for a file the
bytes written to it but not yet read), when its last chunk came, and its last error. Read from
the log alone: it works while another process watches. Without a continuity: the most recently
active one.

Options:
  --json                 Print one JSON object per source (the full cursor and counts)
${DB_HELP_LINES}

Examples:
  spool sources
  spool sources monitor --json
`,
};

/** One source as `spool sources` shows it. */
export interface SourceRow {
  id: string;
  kind: string;
  target: string;
  status: SourceState["status"];
  chunks: number;
  lines: number;
  bytes: number;
  delivered: number;
  /** Chunks logged and not yet delivered to the agent. */
  undelivered: number;
  /** For a file: bytes in the file beyond the cursor (unread), when it is still the same file. */
  unread_bytes?: number;
  cursor: SourceState["cursor"];
  matches: Record<string, number>;
  last_chunk_at?: string;
  last_error?: { code: string; message: string };
}

/**
 * `spool sources [continuity] [--json]`: where each source of a continuity stands, folded from
 * its log. Throws `NotFoundError` (exit 1) for a missing store or continuity, `UsageError`
 * (exit 2) for bad arguments; writes nothing.
 */
export async function sourcesCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "sources";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    json: { type: "boolean" },
  });
  const [given, ...extra] = positionals;
  if (extra.length > 0) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra[0])}`);
  }
  const target = locateStore(ctx, values.db);
  const { continuity, rows } = await withActiveContinuity(
    ctx,
    target,
    given,
    async (store, continuity) => {
      const state = await readSourcesState(store, continuity);
      return { continuity, rows: [...state.sources.values()].map((s) => sourceRow(s, ctx.io.cwd)) };
    },
  );
  if (values.json) {
    for (const row of rows) ctx.out(JSON.stringify(row));
    return 0;
  }
  if (rows.length === 0) {
    ctx.err(
      `Continuity ${JSON.stringify(continuity)} has no sources: declare them under sources: in its agent manifest (docs/sources.md).`,
    );
    return 0;
  }
  if (given === undefined) ctx.err(ctx.errStyle.dim(`Sources of ${oneLine(continuity)}:`));
  for (const line of sourceTable(rows, ctx.style)) ctx.out(line);
  return 0;
}

/**
 * The lines `spool sources` prints for `rows`: a table (source, kind, target, status, chunks,
 * bytes, cursor, lag, last chunk), then the last error of each source that stopped.
 */
export function sourceTable(rows: readonly SourceRow[], style: Style): string[] {
  const table = renderTable(
    ["SOURCE", "KIND", "TARGET", "STATUS", "CHUNKS", "BYTES", "CURSOR", "LAG", "LAST CHUNK"],
    rows.map((row) => [
      truncate(oneLine(row.id), 24),
      row.kind,
      truncate(oneLine(redactSecrets(row.target)), 32),
      row.status,
      row.chunks.toLocaleString("en-US"),
      bytesText(row.bytes),
      truncate(cursorText(row.cursor), 28),
      lagText(row),
      row.last_chunk_at ? formatTime(row.last_chunk_at) : "-",
    ]),
    style,
    [4, 5],
  );
  const lines = table.trimEnd().split("\n");
  for (const row of rows) {
    if (row.last_error && row.status !== "active") {
      lines.push(
        style.dim(`  ${row.id}: ${row.last_error.code}: ${oneLine(row.last_error.message)}`),
      );
    }
  }
  return lines;
}

/** One source's row: its fold, and for a file how far the file has grown beyond the cursor. */
export function sourceRow(state: SourceState, cwd: string): SourceRow {
  const definition = state.definition;
  const row: SourceRow = {
    id: state.id,
    kind: definition?.kind ?? "?",
    target: definition?.target ?? "?",
    status: state.status,
    chunks: state.chunks,
    lines: state.lines,
    bytes: state.bytes,
    delivered: state.delivered,
    undelivered: Math.max(0, state.chunks - state.delivered),
    cursor: state.cursor,
    matches: state.matches,
    ...(state.lastChunkAt ? { last_chunk_at: state.lastChunkAt } : {}),
    ...(state.lastError ? { last_error: state.lastError } : {}),
  };
  const unread = definition?.kind === "file" ? unreadBytes(state, cwd) : undefined;
  if (unread !== undefined) row.unread_bytes = unread;
  return row;
}

/** Bytes of a tailed file beyond its cursor, when the file at its target is the cursor's file. */
function unreadBytes(state: SourceState, cwd: string): number | undefined {
  const cursor = state.cursor ? parseFileCursor(state.cursor) : undefined;
  if (!cursor || !state.definition) return undefined;
  try {
    const stat = statSync(resolvePath(cwd, state.definition.target), { bigint: true });
    if (String(stat.dev) !== cursor.dev || String(stat.ino) !== cursor.ino) return undefined;
    return Math.max(0, Number(stat.size) - cursor.offset);
  } catch {
    return undefined;
  }
}

function resolvePath(cwd: string, target: string): string {
  return isAbsolute(target) ? target : resolve(cwd, target);
}

function lagText(row: SourceRow): string {
  const parts: string[] = [];
  if (row.undelivered > 0) parts.push(plural(row.undelivered, "chunk"));
  if (row.unread_bytes) parts.push(`${bytesText(row.unread_bytes)} unread`);
  return parts.length > 0 ? parts.join(", ") : "none";
}

/** A cursor in a few characters: a file's offset, an SSE id, a dataset's file and offset. */
function cursorText(cursor: SourceRow["cursor"]): string {
  if (!cursor) return "-";
  if (typeof cursor.offset === "number" && typeof cursor.file === "string") {
    return `${cursor.file} @${cursor.offset.toLocaleString("en-US")}`;
  }
  if (typeof cursor.offset === "number") return `@${cursor.offset.toLocaleString("en-US")}`;
  if (typeof cursor.last_event_id === "string") return `id ${cursor.last_event_id}`;
  return JSON.stringify(cursor);
}

function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
