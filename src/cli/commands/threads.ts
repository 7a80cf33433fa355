import { shortThreadId, type ThreadRow, ThreadRowsFold } from "../../app/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { formatTime, oneLine, renderTable, truncate } from "../format.js";
import type { CommandHelp } from "../usage.js";
import { withActiveContinuity } from "./active-continuity.js";

/** The help of `spool threads`, for the integrator to register in `USAGE`. */
export const THREADS_USAGE: CommandHelp = {
  synopsis: "spool threads [continuity] [--json]",
  text: `Usage: spool threads [continuity] [--json]

Lists the threads of a continuity in the order they started: id, directive, model, the parent
thread and action of a child thread (summarizers and hooks are children named after their job),
model steps, runs (completed/total), status (running, open, completed, failed, cancelled, or
continued → the thread that took over), start time and the tokens its steps used. A continued
thread is followed by its handoff: the reason, the context pressure, the tokens before → after
(the continuation's seed), the summary it passed on, or "trailing-only" when it had none. A
continuation comes after its predecessor. Without a continuity: the most recently active one.

Options:
  --json                 Print one JSON object per thread (full ids, the handoff, the seed)
${DB_HELP_LINES}

Examples:
  spool threads
  spool threads home --json
`,
};

/**
 * `spool threads [continuity] [--json]`: a table (or JSON lines) of a continuity's threads,
 * folded from one read of its log. Throws `NotFoundError` (exit 1) for a missing store or
 * continuity, `UsageError` (exit 2) for bad arguments; writes nothing to the store.
 */
export async function threadsCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "threads";
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
      const fold = new ThreadRowsFold();
      for await (const event of store.read({ continuity })) fold.push(event);
      return { continuity, rows: fold.rows() };
    },
  );
  if (values.json) {
    for (const row of rows) ctx.out(JSON.stringify(row));
    return 0;
  }
  if (rows.length === 0) {
    ctx.err(`Continuity ${JSON.stringify(continuity)} has no threads yet.`);
    return 0;
  }
  if (given === undefined) ctx.err(ctx.errStyle.dim(`Threads of ${oneLine(continuity)}:`));
  const table = renderTable(
    [
      "THREAD",
      "DIRECTIVE",
      "MODEL",
      "PARENT",
      "STEPS",
      "RUNS",
      "STATUS",
      "STARTED",
      "TOKENS IN",
      "TOKENS OUT",
    ],
    rows.map((row) => [
      shortThreadId(oneLine(row.id)),
      truncate(oneLine(row.directive), 24),
      row.model === null ? "-" : truncate(oneLine(row.model), 28),
      row.parent === null
        ? "-"
        : `${shortThreadId(oneLine(row.parent.thread))} / ${truncate(oneLine(row.parent.action), 16)}`,
      String(row.steps),
      `${row.runs.completed}/${row.runs.total}`,
      statusText(row),
      formatTime(row.started_at),
      tokens(row.tokens.input),
      tokens(row.tokens.output),
    ]),
    ctx.style,
    [4, 5, 8, 9],
  );
  const [header, ...lines] = table.trimEnd().split("\n");
  ctx.out(header!);
  rows.forEach((row, index) => {
    ctx.out(lines[index]!);
    const handoff = handoffLine(ctx, row);
    if (handoff !== undefined) ctx.out(handoff);
  });
  return 0;
}

/** `continued → th-…1C2` for a continued thread; else the status. */
function statusText(row: ThreadRow): string {
  if (row.status !== "continued" || row.continuation === null) return row.status;
  return `continued → ${shortThreadId(oneLine(row.continuation.thread))}`;
}

/**
 * The line under a continued thread: `  ↪ handoff: context pressure · pressure 0.91 · 7,402 →
 * 2,310 tokens · summary 812 tokens`, with `trailing-only (no summary)` flagged instead of the
 * summary for the last-resort handoff.
 */
function handoffLine(ctx: CommandContext, row: ThreadRow): string | undefined {
  const handoff = row.continuation;
  if (handoff === null) return undefined;
  const details = [truncate(oneLine(handoff.reason), 48)];
  if (handoff.pressure_ratio !== null)
    details.push(`pressure ${handoff.pressure_ratio.toFixed(2)}`);
  if (handoff.tokens_before !== null && handoff.tokens_after !== null) {
    details.push(`${tokens(handoff.tokens_before)} → ${tokens(handoff.tokens_after)} tokens`);
  }
  if (handoff.summary_tokens !== null)
    details.push(`summary ${tokens(handoff.summary_tokens)} tokens`);
  if (row.deferred_handoffs > 0) {
    details.push(`after ${row.deferred_handoffs} deferred`);
  }
  const line = ctx.style.dim(
    `  ↪ handoff to ${shortThreadId(oneLine(handoff.thread))}: ${details.join(" · ")}`,
  );
  return handoff.mode === "trailing-only"
    ? `${line}${ctx.style.dim(" · ")}${ctx.style.yellow("trailing-only (no summary)")}`
    : line;
}

function tokens(value: number): string {
  return value.toLocaleString("en-US");
}
