import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  UsageError,
} from "../context.js";
import { formatTime, oneLine, renderTable, truncate } from "../format.js";
import type { CommandHelp } from "../usage.js";
import { withActiveContinuity } from "./active-continuity.js";
import { shortThreadId, type ThreadRow, ThreadRowsFold } from "./thread-rows.js";

/** The help of `spool threads`, for the integrator to register in `USAGE`. */
export const THREADS_USAGE: CommandHelp = {
  synopsis: "spool threads [continuity] [--json]",
  text: `Usage: spool threads [continuity] [--json]

Lists the threads of a continuity in the order they started: id, directive, model, the parent
thread and action of a child thread, model steps, runs (completed/total), status (running, open,
completed, failed, cancelled, or continued → the thread that took over, with its reason and
context pressure), start time and the tokens its steps used. Without a continuity: the most
recently active one.

Options:
  --json                 Print one JSON object per thread (full ids)
  --db <dir | file.db | postgres://…>
                         Where the log lives (default: $SPOOL_DB, then ./.spool/)
  -h, --help             Show this help

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
  ctx.io.stdout.write(
    renderTable(
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
    ),
  );
  return 0;
}

/** `continued → th-…1C2 (context pressure, 0.92)` for a continued thread; else the status. */
function statusText(row: ThreadRow): string {
  if (row.status !== "continued" || row.continuation === null) return row.status;
  const { thread, reason, pressure_ratio } = row.continuation;
  const details = [truncate(oneLine(reason), 32)];
  if (pressure_ratio !== null) details.push(`pressure ${pressure_ratio.toFixed(2)}`);
  return `continued → ${shortThreadId(oneLine(thread))} (${details.join(", ")})`;
}

function tokens(value: number): string {
  return value.toLocaleString("en-US");
}
