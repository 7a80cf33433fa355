import type { EventStore } from "../../log/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import type { CommandHelp } from "../usage.js";
import { withActiveContinuity } from "./active-continuity.js";
import { defaultActor } from "./continuities.js";
import { ConversationView, FOLD_LINES } from "./conversation-view.js";
import { followLog } from "./log-tail.js";

/** How many of the latest turns `spool tail` shows before following, without `--from-start`. */
export const TAIL_RECENT_TURNS = 2;

/** The help of `spool tail`, for the integrator to register in `USAGE`. */
export const TAIL_USAGE: CommandHelp = {
  synopsis: "spool tail [continuity] [--from-start] [--json]",
  text: `Usage: spool tail [continuity] [--from-start] [--json]

Follows a continuity live as a conversation: turns, the model's thoughts (dim) and responses as
they stream, each action and how it ended, token use per step, limits, recoveries and runs that
did not complete. One conversation across threads: a handoff to a new thread is one quiet line
(its pressure, tokens before → after and summary size); summarizer and hook threads are not
shown. As in \`spool chat\`: your own turns read "you › text" (anyone else's "› who: text"),
a turn of more than ${FOLD_LINES} lines is folded, and responses are rendered as markdown. Starts
with the last ${TAIL_RECENT_TURNS} turns and keeps watching until Ctrl-C. Without a continuity:
the most recently active one.

Options:
  --from-start           Show the whole continuity before following
  --json                 Print one JSON event per line instead (as \`spool log tail --json\`)
${DB_HELP_LINES}

Examples:
  spool tail
  spool tail home --from-start
  spool tail home --json | jq -c 'select(.type == "action.failed")'
`,
};

/**
 * `spool tail [continuity] [--from-start] [--json]`: shows the latest exchanges of a continuity
 * (from its last two turns, or all of it with `--from-start`), then follows it live until SIGINT,
 * SIGTERM or `io.signal` (exit 0). Read-only: never creates a store or appends. Throws
 * `NotFoundError` (exit 1) for a missing store or continuity, `UsageError` (exit 2) for bad
 * arguments.
 */
export async function tailCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "tail";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    "from-start": { type: "boolean" },
    json: { type: "boolean" },
  });
  const [given, ...extra] = positionals;
  if (extra.length > 0) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra[0])}`);
  }
  const target = locateStore(ctx, values.db);
  await withActiveContinuity(ctx, target, given, async (store, continuity) => {
    if (given === undefined) ctx.err(ctx.errStyle.dim(`Following ${continuity}`));
    const after = values["from-start"] ? 0 : await startOfRecentTurns(store, continuity);
    if (values.json) {
      await followLog(ctx, store, { continuity, after }, (event) => ctx.out(JSON.stringify(event)));
      return;
    }
    const view = new ConversationView({
      style: ctx.style,
      width: ctx.width,
      you: defaultActor(ctx),
      write: (chunk) => void ctx.io.stdout.write(chunk),
    });
    try {
      await followLog(ctx, store, { continuity, after }, (event) => view.push(event));
    } finally {
      view.finish();
    }
  });
  return 0;
}

/** The seq just before the continuity's last `turns` turns (0 with fewer turns). */
export async function startOfRecentTurns(
  store: EventStore,
  continuity: string,
  turns = TAIL_RECENT_TURNS,
): Promise<number> {
  const recent: number[] = [];
  for await (const event of store.read({ continuity, types: ["turn.added"] })) {
    recent.push(event.seq);
    if (recent.length > turns) recent.shift();
  }
  return recent.length < turns ? 0 : recent[0]! - 1;
}
