import type { WatchSourceConfig } from "../../frames/index.js";
import type { EventStore } from "../../log/index.js";
import {
  ActorRosters,
  type AgentRuntime,
  ContinuityLiveError,
  type RunNotice,
} from "../../runtime/index.js";
import type { SourceDefinition } from "../../sources/index.js";
import { resolveThreadsDir } from "../../transcript/index.js";
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
import { oneLine } from "../format.js";
import type { CommandHelp } from "../usage.js";
import {
  type AgentSession,
  ensureContinuity,
  foregroundDirective,
  openAgentSession,
  recordSessionMcp,
  sessionMcp,
} from "./agent-session.js";
import { defaultActor } from "./continuities.js";
import { cliLeaseOptions } from "./continuity-follower.js";
import { ConversationView } from "./conversation-view.js";
import { DEFAULT_WATCH_AGENT, noModelError, runElsewhere, watchedSources } from "./watch-checks.js";
import { goOnLine, headerLine, printSources } from "./watch-lines.js";
import { followEvents, formatDuration, parseDuration, waitFor } from "./watch-support.js";

/** Help of `spool watch`. */
export const WATCH_USAGE: CommandHelp = {
  synopsis:
    "spool watch [--agent NAME] [--continuity ID] [--for DURATION | --until-exhausted] [--json]",
  text: `Usage: spool watch [--agent NAME] [--continuity ID] [--for DURATION | --until-exhausted] [--json]

Runs an agent on its sources (the files, commands and feeds its manifest declares under
sources:) and shows what it does, live: its notes and answers as they stream (thoughts dim),
its actions, one quiet line per delivery of new data ("▸ log: chunks 12–14 · 1,500 lines ·
error 37"; the digest the model reads is not shown), and a quiet line when a source rotates,
fails or ends. Without --agent it runs ${DEFAULT_WATCH_AGENT}, the built-in log monitor, over
logs/app.log (copy builtin/agents/log_monitor.yaml to .ai/agents/ to watch another file).

Each agent has its continuity (watch-<agent>, or --continuity), so a second spool watch goes on
exactly where the first stopped: every chunk is read and delivered once. It first finishes a
run a crash interrupted. It stops after --for, once every source has ended and been delivered
(--until-exhausted: a dataset, a command that exits), or on Ctrl-C; it then stops its sources
(their cursors are in the log), prints where each stands (as spool sources does) and exits 0.
A second Ctrl-C stops at once. While another process runs the continuity, it says which and
exits 1 (follow that one with spool tail).

Exit codes: 0 stopped, 1 the continuity is run elsewhere, 2 usage or configuration error (an
agent without sources, a source that may not read its target, no model configured), 3 store
error. Sources, their kinds and options: docs/sources.md.

Options:
  --agent <name>         The agent manifest to run (.ai/agents/<name>.yaml, default ${DEFAULT_WATCH_AGENT};
                         with --continuity, the one that continuity was watched with)
  --continuity <id>      Watch on this continuity (default watch-<agent>; created when absent)
  --for <duration>       Stop after this long: 30s, 5m, 2h, 1d
  --until-exhausted      Stop once every source has ended and all it read was delivered
  --json                 Print the continuity's events as JSON lines instead (as spool run --json)
${DB_HELP_LINES}

Examples:
  spool watch
  spool watch --agent nightly_import --until-exhausted
  spool watch --for 1h --json > watch.jsonl
`,
};

/** How a watch ended. */
type WatchEnd = "time" | "exhausted" | "stopped";

/** What `spool watch` was asked for. */
interface WatchOptions {
  agent?: string;
  continuity?: string;
  forMs?: number;
  untilExhausted: boolean;
  json: boolean;
  db?: string;
}

/**
 * \`spool watch\`: takes an agent's continuity up (its sources start), shows what happens until
 * \`--for\`, \`--until-exhausted\` or a signal, then stops cleanly and prints the sources' rows.
 */
export async function watchCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "watch";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    agent: { type: "string" },
    continuity: { type: "string" },
    for: { type: "string" },
    "until-exhausted": { type: "boolean" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      command,
      `unexpected ${JSON.stringify(positionals[0])}: name the agent with --agent`,
    );
  }
  if (values.for !== undefined && values["until-exhausted"]) {
    throw new UsageError(command, "give --for or --until-exhausted, not both");
  }
  const options: WatchOptions = {
    ...(values.agent !== undefined ? { agent: values.agent } : {}),
    ...(values.continuity !== undefined
      ? { continuity: parseIdentifier(command, "--continuity", values.continuity) }
      : {}),
    ...(values.for !== undefined ? { forMs: parseDuration(command, values.for) } : {}),
    untilExhausted: values["until-exhausted"] === true,
    json: values.json === true,
    ...(values.db !== undefined ? { db: values.db } : {}),
  };
  const store = await openStore(ctx, locateStore(ctx, values.db));
  const stop = new AbortController();
  const signals = watchSignals(ctx, stop);
  let session: AgentSession | undefined;
  try {
    const agent =
      options.agent ??
      (options.continuity !== undefined
        ? (await foregroundDirective(store, options.continuity))?.agent
        : undefined) ??
      DEFAULT_WATCH_AGENT;
    const continuity = options.continuity ?? `watch-${agent.replace(/[^A-Za-z0-9._:@-]/g, "-")}`;
    // What the log does not show as lines: an assumed window, a provider call being retried.
    const notes = new Notes();
    const mcp = await sessionMcp(ctx, store, continuity, agent);
    session = openAgentSession(ctx, store, continuity, {
      agent,
      mcp,
      observer: (notice) => notes.observe(notice),
      lease: cliLeaseOptions(ctx),
      threadsDir: resolveThreadsDir({ cwd: ctx.io.cwd, env: ctx.io.env, db: options.db }),
    });
    const { assembled } = session;
    if (assembled.demo) throw noModelError();
    const definitions = await watchedSources(ctx, store, continuity, assembled, agent);
    const held = await store.lease(continuity);
    if (held?.live) return runElsewhere(ctx, continuity, held.holder ?? "unknown");
    // From before a new continuity's creation: `--json` prints its whole log.
    const start = (await store.continuity(continuity))?.lastSeq ?? 0;
    if (!(await ensureContinuity(ctx, store, continuity, `spool watch ${agent}`, "watch", agent))) {
      await new ActorRosters(store).check(continuity, defaultActor(ctx));
    }
    for (const line of await recordSessionMcp(store, mcp)) ctx.err(ctx.errStyle.dim(line));
    const watched = { store, session, agent, continuity, definitions, start, notes };
    const code = await runWatch(ctx, watched, options, stop.signal, signals.stopping);
    session = undefined;
    return code;
  } finally {
    signals.remove();
    await session?.close();
    await store.close();
  }
}

/** The watch's quiet lines from the runtime's notices, once it has somewhere to say them. */
class Notes {
  say: (line: string) => void = () => {};

  observe(notice: RunNotice): void {
    if (notice.type === "model-notice") this.say(`note: ${oneLine(notice.text)}`);
    if (notice.type === "memory-notice") this.say(`warning: ${oneLine(notice.text)}`);
    if (notice.type === "retry") {
      const wait = formatDuration(Math.max(1_000, notice.delayMs));
      this.say(`↻ ${oneLine(notice.message)}: retrying in ${wait} (attempt ${notice.attempt})`);
    }
  }
}

/** A watch ready to run: the session over its continuity and where its log stood. */
interface Watched {
  store: EventStore;
  session: AgentSession;
  agent: string;
  continuity: string;
  definitions: SourceDefinition[];
  start: number;
  notes: Notes;
}

/**
 * Shows the continuity from \`start\` (rendered, or as JSON lines), takes it up, waits for the
 * watch's end, closes the session (always, also on a throw) and prints the sources' rows.
 */
async function runWatch(
  ctx: CommandContext,
  watched: Watched,
  options: WatchOptions,
  signal: AbortSignal,
  stopping: () => void,
): Promise<number> {
  const { store, session, continuity } = watched;
  const view = options.json
    ? undefined
    : new ConversationView({
        style: ctx.style,
        width: ctx.width,
        you: defaultActor(ctx),
        write: (chunk) => void ctx.io.stdout.write(chunk),
      });
  const say = (line: string) => {
    view?.finish();
    if (options.json) ctx.err(ctx.errStyle.dim(line));
    else ctx.out(ctx.style.dim(line));
  };
  watched.notes.say = say;
  say(await headerLine(watched, session.assembled));
  if (options.untilExhausted) {
    const endless = watched.definitions.filter((definition) => !ENDING_KINDS.has(definition.kind));
    const frames = session.assembled.watch?.source;
    if (endless.length > 0 || (frames && !framesEnd(frames))) {
      const names = endless.map((definition) => `${definition.id} (${definition.kind})`);
      if (frames && !framesEnd(frames)) names.push(`the frames (${frames.kind})`);
      say(`note: ${names.join(", ")} never ends on its own: --until-exhausted waits for Ctrl-C`);
    }
  }
  const follower = followEvents(store, continuity, watched.start, (event) =>
    view ? view.push(event) : ctx.out(JSON.stringify(event)),
  );
  try {
    const taken = await takeUp(session.runtime, continuity, signal);
    if (taken instanceof ContinuityLiveError) return runElsewhere(ctx, continuity, taken.holder);
    const end = await watchUntil(session, continuity, watched.definitions.length, {
      ...options,
      signal,
    });
    stopping();
    say(endLine(end, options.forMs));
    await session.close();
    await store.flush();
    await follower.until((await store.continuity(continuity))?.lastSeq ?? 0);
  } finally {
    await follower.stop();
    view?.finish();
    await session.close();
  }
  const states = await printSources(ctx, store, continuity, options.json);
  say(
    goOnLine(states, options.agent !== undefined ? watched.agent : undefined, options.continuity),
  );
  return 0;
}

/** Kinds whose input ends on its own (`--until-exhausted` can finish on them). */
const ENDING_KINDS = new Set(["dataset", "command", "sse"]);

/**
 * Takes the continuity up (`runtime.resume`: a crashed run is recovered, the sources start),
 * unless a stop comes first; returns the `ContinuityLiveError` when another process runs it.
 */
async function takeUp(
  runtime: AgentRuntime,
  continuity: string,
  signal: AbortSignal,
): Promise<ContinuityLiveError | undefined> {
  let live: ContinuityLiveError | undefined;
  const resumed = runtime.resume(continuity).then(
    () => undefined,
    (error: unknown) => {
      if (!(error instanceof ContinuityLiveError)) throw error;
      live = error;
    },
  );
  // A stop during a long recovery does not wait for it: closing the runtime cancels it.
  resumed.catch(() => undefined);
  await Promise.race([resumed, aborted(signal)]);
  return live;
}

/** True when a frame source ends on its own: a directory not followed, a video that is not live. */
function framesEnd(source: WatchSourceConfig): boolean {
  if (source.kind === "directory") return source.follow !== true;
  if (source.kind === "video") return source.live !== true;
  return false;
}

/**
 * Waits for the end of the watch: `forMs`, every source done and the frames' watch stopped with
 * every frame looked at (`untilExhausted`), or `signal`.
 */
async function watchUntil(
  session: AgentSession,
  continuity: string,
  sources: number,
  options: { signal: AbortSignal; forMs?: number | undefined; untilExhausted: boolean },
): Promise<WatchEnd> {
  const { signal } = options;
  if (options.forMs !== undefined) {
    await waitFor(options.forMs, signal);
    return signal.aborted ? "stopped" : "time";
  }
  if (options.untilExhausted) {
    try {
      if (sources > 0) await session.runtime.sources(continuity).untilExhausted(signal);
      const frames = await session.watch;
      if (frames) await Promise.race([frames.done, aborted(signal)]);
      if (signal.aborted) return "stopped";
      return "exhausted";
    } catch (error) {
      if (signal.aborted) return "stopped";
      throw error;
    }
  }
  await aborted(signal);
  return "stopped";
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}

function endLine(end: WatchEnd, forMs: number | undefined): string {
  if (end === "time") return `■ watched for ${formatDuration(forMs ?? 0)}: stopping`;
  if (end === "exhausted")
    return "■ every source has ended and all it read was delivered: stopping";
  return "■ stopping (Ctrl-C again stops at once)";
}

/**
 * SIGINT and SIGTERM (and `io.signal`) stop the watch cleanly; once it is stopping, a second
 * SIGINT or SIGTERM ends the process at once (exit 130): every cursor is in the log already.
 */
function watchSignals(ctx: CommandContext, stop: AbortController) {
  let stopping = false;
  const onSignal = () => {
    if (stopping || stop.signal.aborted) {
      ctx.err("spool: stopped at once; the log holds every source's cursor: spool watch goes on");
      process.exit(130);
    }
    stop.abort();
  };
  const onAbort = () => stop.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  ctx.io.signal?.addEventListener("abort", onAbort, { once: true });
  if (ctx.io.signal?.aborted) stop.abort();
  return {
    /** The watch is stopping on its own (time, exhaustion): a signal now forces. */
    stopping: () => {
      stopping = true;
    },
    remove: () => {
      process.removeListener("SIGINT", onSignal);
      process.removeListener("SIGTERM", onSignal);
      ctx.io.signal?.removeEventListener("abort", onAbort);
    },
  };
}
