import { ulid } from "ulid";
import { parseInputArgs } from "../../directives/index.js";
import type { EventStore } from "../../log/index.js";
import { ActorRosters, type AgentRuntime, ContinuityLiveError } from "../../runtime/index.js";
import { resolveThreadsDir } from "../../transcript/index.js";
import { createChatRenderer } from "../chat/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  openStore,
  parseCommandArgs,
  parseIdentifier,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import type { CommandHelp } from "../usage.js";
import {
  ensureContinuity,
  openAgentSession,
  recordSessionMcp,
  sessionMcp,
} from "./agent-session.js";
import { defaultActor } from "./continuities.js";
import {
  awaitTurnAnswer,
  cliLeaseOptions,
  followContinuity,
  followingLine,
  queueTurn,
  type TurnAnswer,
} from "./continuity-follower.js";

/** Exit codes of `spool run`, by how the run ended. */
export const RUN_EXIT = { completed: 0, failed: 1, limit: 4, cancelled: 5, continued: 0 } as const;

/** Help of `spool run`: for the integrator to register in `USAGE`. */
export const RUN_USAGE: CommandHelp = {
  synopsis: "spool run <directive> [--input k=v]… [--prompt TEXT] [--agent NAME] [--json]",
  text: `Usage: spool run <directive> [--input k=v]… [--prompt TEXT] [--agent NAME] [--json]

Runs a directive once, non-interactively, on a new continuity (or --continuity), shows the run
as the chat does (plain text when not on a terminal), and exits with the run's status:
0 completed, 1 failed, 4 stopped by a limit, 5 cancelled (2: usage or configuration error).
On an existing continuity it first finishes any run a crash interrupted. While another process
runs the continuity, the prompt is queued for that process and this command follows the
continuity until its answer (or runs it here, should that process end first).

Options:
  --input <k=v>          A typed input of the directive (repeat for several)
  --prompt <text>        What to ask (default: run the directive with its inputs)
  --agent <name>         Use this agent manifest's tools and limits with the directive
  --continuity <id>      Run on this continuity (created when absent)
  --json                 Print the run's events as JSON lines instead
${DB_HELP_LINES}

Examples:
  spool run demo
  spool run assistant --prompt "What is in README.md?"
  spool run report --input topic=weather --json
`,
};

/** `spool run <directive>`: one run of a directive, exiting with its status. */
export async function runCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "run";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    input: { type: "string", multiple: true },
    prompt: { type: "string" },
    agent: { type: "string" },
    continuity: { type: "string" },
    json: { type: "boolean" },
  });
  const [directiveName, ...rest] = positionals;
  if (directiveName === undefined) throw new UsageError(command, "missing <directive>");
  if (rest.length > 0) {
    throw new UsageError(
      command,
      `unexpected ${JSON.stringify(rest[0])}: give inputs with --input k=v`,
    );
  }
  const given = parseInputArgs(values.input ?? []);
  const continuity =
    values.continuity !== undefined
      ? parseIdentifier(command, "--continuity", values.continuity)
      : `run-${ulid().toLowerCase()}`;
  const store = await openStore(ctx, locateStore(ctx, values.db));
  const renderer = values.json
    ? undefined
    : createChatRenderer({ output: ctx.io.stdout, env: ctx.io.env });
  let session: ReturnType<typeof openAgentSession> | undefined;
  let printer: EventPrinter | undefined;
  try {
    const mcp = await sessionMcp(ctx, store, continuity, values.agent);
    session = openAgentSession(ctx, store, continuity, {
      mcp,
      directive: directiveName,
      inputs: given,
      ...(values.agent !== undefined ? { agent: values.agent } : {}),
      ...(renderer ? { observer: renderer.observe } : {}),
      lease: cliLeaseOptions(ctx),
      threadsDir: resolveThreadsDir({ cwd: ctx.io.cwd, env: ctx.io.env, db: values.db }),
    });
    const { assembled, runtime } = session;
    if (assembled.demoReason && renderer) renderer.info(assembled.demoReason);
    const created = await ensureContinuity(
      ctx,
      store,
      continuity,
      `spool run ${directiveName}`,
      "run",
      values.agent,
    );
    for (const line of await recordSessionMcp(store, mcp)) {
      if (renderer) renderer.info(line);
      else ctx.err(ctx.errStyle.dim(line));
    }
    // An actor the continuity refuses is told so before anything runs (a resume included).
    if (!created) await new ActorRosters(store).check(continuity, defaultActor(ctx));
    if (values.json) printer = printEvents(ctx, store, continuity);
    const onSignal = () => runtime.cancel(continuity, "cancelled by a signal");
    ctx.io.signal?.addEventListener("abort", onSignal, { once: true });
    const inputs =
      Object.keys(given).length > 0 ? ` with its inputs: ${JSON.stringify(given)}` : "";
    const turn = {
      text: values.prompt ?? `Run the directive "${directiveName}"${inputs}.`,
      actor: defaultActor(ctx),
      origin: "cli",
    };
    let status: TurnAnswer["status"];
    try {
      if (!created) await runtime.resume(continuity);
      status = (await runtime.submit(continuity, turn)).status;
    } catch (error) {
      if (!(error instanceof ContinuityLiveError)) throw error;
      const line = followingLine(error.holder, "queued the prompt for it; following");
      if (renderer) renderer.info(line);
      else ctx.err(ctx.errStyle.dim(line));
      status = await queueAndFollow(ctx, store, runtime, continuity, turn, !renderer);
    }
    ctx.io.signal?.removeEventListener("abort", onSignal);
    if (printer) {
      await store.flush();
      await printer.until((await store.continuity(continuity))?.lastSeq ?? 0);
    }
    return RUN_EXIT[status];
  } finally {
    printer?.stop();
    renderer?.close();
    await session?.close();
    await store.close();
  }
}

/**
 * Queues `turn` for the process that runs `continuity` and follows the continuity (rendered, or
 * as JSON lines by the caller's printer when `quiet`) until the run that took the turn ends;
 * should that process end or die first, runs the waiting turns here. Returns how the run ended.
 */
async function queueAndFollow(
  ctx: CommandContext,
  store: EventStore,
  runtime: AgentRuntime,
  continuity: string,
  turn: { text: string; actor: string; origin: string },
  quiet: boolean,
): Promise<TurnAnswer["status"]> {
  const queued = await queueTurn(store, continuity, turn);
  const follower = quiet ? undefined : followContinuity(ctx, store, continuity, queued.seq - 1);
  try {
    const answer = await awaitTurnAnswer(store, continuity, queued.id, queued.seq - 1, {
      ...(ctx.io.signal ? { signal: ctx.io.signal } : {}),
      takeOver: async () => {
        try {
          await runtime.resume(continuity);
          return true;
        } catch (error) {
          // Another process was quicker to take it: the turn is its to run.
          if (!(error instanceof ContinuityLiveError)) throw error;
          return false;
        }
      },
    });
    await follower?.stop(answer?.seq);
    return answer?.status ?? "cancelled";
  } finally {
    await follower?.stop();
  }
}

/** Prints a continuity's events as JSON lines as they are appended. */
interface EventPrinter {
  /** Resolves once every event up to `seq` is printed (or the printing ended). */
  until(seq: number): Promise<void>;
  stop(): void;
}

function printEvents(ctx: CommandContext, store: EventStore, continuity: string): EventPrinter {
  const controller = new AbortController();
  let printed = 0;
  let waiter: { seq: number; resolve(): void } | undefined;
  const done = (async () => {
    for await (const message of store.subscribe({ continuity, signal: controller.signal })) {
      if (message.type !== "event") continue;
      ctx.out(JSON.stringify(message.event));
      printed = message.event.seq;
      if (waiter && printed >= waiter.seq) waiter.resolve();
    }
  })();
  return {
    until(seq) {
      if (printed >= seq) return Promise.resolve();
      return Promise.race([
        new Promise<void>((resolve) => {
          waiter = { seq, resolve };
        }),
        done,
      ]);
    },
    stop: () => controller.abort(),
  };
}
