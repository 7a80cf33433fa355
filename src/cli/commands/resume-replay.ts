import { replayContinuity } from "../../replay/index.js";
import { ContinuityLiveError } from "../../runtime/index.js";
import type { SpoolEvent } from "../../spec/index.js";
import { resolveThreadsDir } from "../../transcript/index.js";
import { createChatRenderer } from "../chat/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  storeNotFound,
  UsageError,
  withStore,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import type { CommandHelp } from "../usage.js";
import { withActiveContinuity } from "./active-continuity.js";
import {
  foregroundDirective,
  openAgentSession,
  recordSessionMcp,
  sessionMcp,
} from "./agent-session.js";
import { cliLeaseOptions } from "./continuity-follower.js";

/** Help of `spool resume`: for the integrator to register in `USAGE`. */
export const RESUME_USAGE: CommandHelp = {
  synopsis: "spool resume [continuity]",
  text: `Usage: spool resume [continuity] [--db …]

Continues every run a crash interrupted (or only the continuity's), from the log alone: no model
call is repeated for a step whose message completed; an action with a durable intent and no
result is reported to the model as interrupted and run again only if its tool is idempotent;
turns no run took are run in order. \`spool chat\` does this on start for its continuity.
A continuity that another process is running (its lease is live) is left to that process: it is
not a crashed run. Named, it exits 1 saying so; once that process ends or dies (its lease lapses
after SPOOL_LEASE_TTL_MS, default 15 s), it can be resumed.

Options:
${DB_HELP_LINES}
`,
};

/** Help of `spool replay`: for the integrator to register in `USAGE`. */
export const REPLAY_USAGE: CommandHelp = {
  synopsis: "spool replay [<continuity>] [--verify] [--json]",
  text: `Usage: spool replay [<continuity>] [--verify] [--json] [--db …]

Re-runs a continuity (default: the most recently active one) from its log into a scratch store: its inputs again, the recorded model
outputs and tool results in place of the model and the tools (nothing external is called),
restarts (a crash, or a process taking the continuity up after another) re-enacted where
recovery began. Every decision (context, dispatch, retry, skip, loop decision, recovery) is
re-derived and compared with the log; prints "identical" (exit 0) or the first event that
differs (exit 1). Replay runs in a closed world: a tool, model, relic, workflow,
clock or network call it would make is reported as a difference.

Options:
  --verify               Exit 1 unless the replay is identical (the default since replay
                         exits 1 on any difference; kept for scripts)
  --json                 Print the report as JSON
  --stall-seconds <n>    How long replay waits with nothing happening before it calls a run stuck (default 10)
${DB_HELP_LINES}
`,
};

/** `spool resume [continuity]`: recovers interrupted runs. */
export async function resumeCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("resume", args, DB_OPTION);
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw storeNotFound(target);
  return withStore(ctx, target, async (store) => {
    const named = positionals[0];
    if (named !== undefined && !(await store.continuity(named))) {
      throw continuityNotFound(target, named);
    }
    const continuities =
      named !== undefined ? [named] : (await store.continuities()).map((head) => head.continuity);
    let failed = 0;
    let resumed = 0;
    let live = 0;
    for (const continuity of continuities) {
      const foreground = await foregroundDirective(store, continuity);
      if (foreground === undefined) continue;
      const renderer = createChatRenderer({ output: ctx.io.stdout, env: ctx.io.env });
      const mcp = await sessionMcp(ctx, store, continuity, foreground.agent);
      for (const line of await recordSessionMcp(store, mcp)) ctx.err(ctx.errStyle.dim(line));
      const session = openAgentSession(ctx, store, continuity, {
        mcp,
        directive: foreground.directive,
        ...(foreground.agent !== undefined ? { agent: foreground.agent } : {}),
        ...(foreground.inputs !== undefined ? { inputs: foreground.inputs } : {}),
        observer: renderer.observe,
        lease: cliLeaseOptions(ctx),
        threadsDir: resolveThreadsDir({ cwd: ctx.io.cwd, env: ctx.io.env, db: values.db }),
      });
      try {
        let results: Awaited<ReturnType<typeof session.runtime.resume>>;
        try {
          results = await session.runtime.resume(continuity);
        } catch (error) {
          if (!(error instanceof ContinuityLiveError)) throw error;
          live += 1;
          ctx.out(
            `${continuity}: live in another process (${error.holder}); not resumed. Follow it with \`spool tail ${continuity}\` or chat on it with \`spool chat --continuity ${continuity}\``,
          );
          continue;
        }
        resumed += results.length;
        failed += results.filter((result) => result.status !== "completed").length;
        if (results.length > 0) {
          ctx.out(`${continuity}: ${results.length} run${results.length === 1 ? "" : "s"} resumed`);
        }
      } finally {
        renderer.close();
        await session.close();
      }
    }
    if (resumed === 0 && live === 0) ctx.out("Nothing to resume: no run was interrupted.");
    return failed === 0 && (named === undefined || live === 0) ? 0 : 1;
  });
}

/** `spool replay <continuity>`: re-derives a continuity from its log. */
export async function replayCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "replay";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    verify: { type: "boolean" },
    json: { type: "boolean" },
    "stall-seconds": { type: "string" },
  });
  const given = positionals[0];
  const stallSeconds = Number(values["stall-seconds"] ?? 10);
  if (!(stallSeconds > 0)) {
    throw new UsageError(command, "--stall-seconds must be a positive number of seconds");
  }
  const target = locateStore(ctx, values.db);
  // Without a continuity: the most recently active one, as `spool context` and `spool log` do.
  return withActiveContinuity(ctx, target, given, async (store, continuity) => {
    const foreground = await foregroundDirective(store, continuity);
    const sessions: ReturnType<typeof openAgentSession>[] = [];
    // The tools each MCP server was offered with come from the log; no server is reached.
    const mcp = await sessionMcp(ctx, store, continuity, foreground?.agent, false);
    const report = await replayContinuity({
      source: store,
      continuity,
      stallMs: stallSeconds * 1000,
      makeRuntime: ({ store: scratch, world }) => {
        const session = openAgentSession(ctx, scratch, continuity, {
          directive: foreground?.directive ?? "assistant",
          ...(foreground?.agent !== undefined ? { agent: foreground.agent } : {}),
          ...(foreground?.model !== undefined ? { model: foreground.model } : {}),
          ...(foreground?.inputs !== undefined ? { inputs: foreground.inputs } : {}),
          replayMemory: foreground?.memory === true,
          provider: world.provider,
          world,
          mcp,
        });
        sessions.push(session);
        return session.runtime;
      },
    });
    for (const session of sessions) void session.assembled.close();
    if (values.json) {
      ctx.out(JSON.stringify(report));
    } else if (report.identical) {
      ctx.out(
        `identical: ${report.compared} decisions re-derived of ${report.events} events${
          report.recoveries > 0
            ? `, ${report.recoveries} restart${report.recoveries === 1 ? "" : "s"} re-enacted`
            : ""
        }${report.taken > 0 ? `, ${report.taken} events of cut-off model output taken from the log` : ""}`,
      );
    } else {
      const { expected, actual, reason } = report.difference!;
      ctx.out(`differs: ${reason}`);
      if (expected) ctx.out(`  logged:  ${describe(expected)}`);
      if (actual) ctx.out(`  derived: ${describe({ ...actual, seq: undefined })}`);
    }
    return report.identical ? 0 : 1;
  });
}

function describe(event: Pick<SpoolEvent, "type" | "stream" | "data"> & { seq?: number }): string {
  const at = event.seq !== undefined ? `seq ${event.seq} ` : "";
  const data = JSON.stringify(event.data);
  return `${at}${event.type} on ${event.stream.kind} ${event.stream.id}: ${data.length > 300 ? `${data.slice(0, 300)}…` : data}`;
}
