import type { AssembledAgent } from "../../app/index.js";
import { displayPath } from "../../directives/index.js";
import type { EventStore } from "../../log/index.js";
import { ActorRosters, type AgentRuntime, ContinuityLiveError } from "../../runtime/index.js";
import {
  checkSourceAccess,
  readSourcesState,
  SourceAccessError,
  type SourceAccessPolicy,
  type SourceDefinition,
  type SourceState,
} from "../../sources/index.js";
import { ConfigError } from "../../spec/index.js";
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
import { oneLine } from "../format.js";
import type { CommandHelp } from "../usage.js";
import { ensureContinuity, foregroundDirective, openAgentSession } from "./agent-session.js";
import { defaultActor } from "./continuities.js";
import { cliLeaseOptions } from "./continuity-follower.js";
import { ConversationView } from "./conversation-view.js";
import { sourceRow, sourceTable } from "./sources.js";
import {
  type EventFollower,
  followEvents,
  formatDuration,
  parseDuration,
  waitFor,
} from "./watch-support.js";

/** The agent `spool watch` runs when none is named: the built-in log monitor. */
export const DEFAULT_WATCH_AGENT = "log_monitor";

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
agent without sources, no model configured), 3 store error.

Options:
  --agent <name>         The agent manifest to run (.ai/agents/<name>.yaml, default ${DEFAULT_WATCH_AGENT};
                         with --continuity, the one that continuity was watched with)
  --continuity <id>      Watch on this continuity (default watch-<agent>; created when absent)
  --for <duration>       Stop after this long: 30s, 5m, 2h, 1d
  --until-exhausted      Stop once every source has ended and all it read was delivered
  --json                 Print the continuity's events as JSON lines instead (as spool run --json)
  --db <dir | file.db | postgres://…>
                         Where the log lives (default: $SPOOL_DB, then ./.spool/)
  -h, --help             Show this help

Examples:
  spool watch
  spool watch --agent nightly_import --until-exhausted
  spool watch --for 1h --json > watch.jsonl
`,
};

/** How a watch ended. */
type WatchEnd = "time" | "exhausted" | "stopped";

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
  const forMs = values.for !== undefined ? parseDuration(command, values.for) : undefined;
  const given =
    values.continuity !== undefined
      ? parseIdentifier(command, "--continuity", values.continuity)
      : undefined;
  const store = await openStore(ctx, locateStore(ctx, values.db));
  const stop = new AbortController();
  const signals = watchSignals(ctx, stop);
  let session: ReturnType<typeof openAgentSession> | undefined;
  let follower: EventFollower | undefined;
  try {
    const agent =
      values.agent ??
      (given !== undefined ? (await foregroundDirective(store, given))?.agent : undefined) ??
      DEFAULT_WATCH_AGENT;
    const continuity = given ?? `watch-${agent.replace(/[^A-Za-z0-9._:@-]/g, "-")}`;
    // What the log does not show as lines: an assumed window, a provider call being retried.
    let tell: (line: string) => void = () => {};
    session = openAgentSession(ctx, store, continuity, {
      agent,
      observer: (notice) => {
        if (notice.type === "model-notice") tell(`note: ${oneLine(notice.text)}`);
        if (notice.type === "retry") {
          const wait = formatDuration(Math.max(1_000, notice.delayMs));
          tell(`↻ ${oneLine(notice.message)}: retrying in ${wait} (attempt ${notice.attempt})`);
        }
      },
      lease: cliLeaseOptions(ctx),
      threadsDir: resolveThreadsDir({ cwd: ctx.io.cwd, env: ctx.io.env, db: values.db }),
    });
    const { assembled, runtime } = session;
    if (assembled.demo) throw noModelError();
    const definitions = await watchedSources(ctx, store, continuity, assembled, agent);
    const held = await store.lease(continuity);
    if (held?.live) return runElsewhere(ctx, continuity, held.holder ?? "unknown");
    // From before a new continuity's creation: `--json` prints its whole log.
    const start = (await store.continuity(continuity))?.lastSeq ?? 0;
    if (!(await ensureContinuity(ctx, store, continuity, `spool watch ${agent}`, "watch", agent))) {
      await new ActorRosters(store).check(continuity, defaultActor(ctx));
    }
    const view = values.json
      ? undefined
      : new ConversationView({
          style: ctx.style,
          width: ctx.width,
          you: defaultActor(ctx),
          write: (chunk) => void ctx.io.stdout.write(chunk),
        });
    const say = (line: string) => {
      view?.finish();
      if (values.json) ctx.err(ctx.errStyle.dim(line));
      else ctx.out(ctx.style.dim(line));
    };
    tell = say;
    say(await headerLine(store, continuity, agent, assembled, definitions));
    if (values["until-exhausted"]) {
      const endless = definitions.filter((definition) => !ENDING_KINDS.has(definition.kind));
      if (endless.length > 0) {
        say(
          `note: ${endless.map((definition) => `${definition.id} (${definition.kind})`).join(", ")} never ends on its own: --until-exhausted waits for Ctrl-C`,
        );
      }
    }
    follower = followEvents(store, continuity, start, (event) =>
      view ? view.push(event) : ctx.out(JSON.stringify(event)),
    );
    const taken = await takeUp(runtime, continuity, stop.signal);
    if (taken instanceof ContinuityLiveError) {
      await follower.stop();
      follower = undefined;
      return runElsewhere(ctx, continuity, taken.holder);
    }
    const end = await watchUntil(runtime, continuity, {
      signal: stop.signal,
      ...(forMs !== undefined ? { forMs } : {}),
      untilExhausted: values["until-exhausted"] === true,
    });
    signals.stopping();
    say(endLine(end, forMs));
    await session.close();
    session = undefined;
    await store.flush();
    await follower.until((await store.continuity(continuity))?.lastSeq ?? 0);
    await follower.stop();
    follower = undefined;
    view?.finish();
    const states = await printSources(ctx, store, continuity, values.json === true);
    say(goOnLine(states, values.agent !== undefined ? agent : undefined, given));
    return 0;
  } finally {
    signals.remove();
    await follower?.stop();
    await session?.close();
    await store.close();
  }
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

/** Waits for the end of the watch: `forMs`, every source done (`untilExhausted`), or `signal`. */
async function watchUntil(
  runtime: AgentRuntime,
  continuity: string,
  options: { signal: AbortSignal; forMs?: number; untilExhausted: boolean },
): Promise<WatchEnd> {
  const { signal } = options;
  if (options.forMs !== undefined) {
    await waitFor(options.forMs, signal);
    return signal.aborted ? "stopped" : "time";
  }
  if (options.untilExhausted) {
    try {
      await runtime.sources(continuity).untilExhausted(signal);
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

/**
 * The sources the watch reads: the manifest's, or (for an agent that lets the model add its
 * own) those the continuity's log has. None at all: a `ConfigError` (exit 2) naming the manifest
 * section to add, with an example.
 */
async function watchedSources(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  assembled: AssembledAgent,
  agent: string,
): Promise<SourceDefinition[]> {
  const config = assembled.options.sources;
  const declared = config?.manifest.definitions ?? [];
  if (config && declared.length > 0) return checkAccess(declared, config.access, agent);
  if (config && (await store.continuity(continuity))) {
    const state = await readSourcesState(store, continuity);
    const known = [...state.sources.values()].filter((source) => source.status !== "removed");
    const definitions = known.flatMap((source) => (source.definition ? [source.definition] : []));
    if (definitions.length > 0) return definitions;
  }
  const found = assembled.space.locate("agent", agent);
  const file = found ? displayPath(found.path, ctx.io.cwd) : `.ai/agents/${agent}.yaml`;
  const where =
    found?.tier === "builtin"
      ? `copy ${file} to .ai/agents/${agent}.yaml and add a sources: section there`
      : `add a sources: section to ${file}`;
  throw new ConfigError(
    "config.no-sources",
    `agent "${agent}" declares no sources, so there is nothing to watch`,
    {
      hint: `To watch a log, ${where}, e.g.\n\nsources:\n  - id: app-log\n    kind: file\n    target: logs/app.log\n    patterns:\n      error: "ERROR|FATAL"\n\n(docs/sources.md has every kind), or run \`spool watch\` without --agent for the built-in ${DEFAULT_WATCH_AGENT}`,
    },
  );
}

/**
 * The declared sources, once each may read its target (`checkSourceAccess`): a command without
 * `shell.run`, a path outside the workspace, a host not allowed is a `ConfigError` (exit 2)
 * listing each with its fix, before anything starts.
 */
function checkAccess(
  definitions: SourceDefinition[],
  access: SourceAccessPolicy,
  agent: string,
): SourceDefinition[] {
  const problems: string[] = [];
  for (const definition of definitions) {
    try {
      checkSourceAccess(definition, access);
    } catch (error) {
      if (!(error instanceof SourceAccessError)) throw error;
      problems.push(`- ${error.message}`);
    }
  }
  if (problems.length === 0) return definitions;
  throw new ConfigError(
    "config.source-denied",
    `agent "${agent}" has sources that may not read their targets:\n${problems.join("\n")}`,
  );
}

function noModelError(): ConfigError {
  return new ConfigError(
    "config.no-provider",
    "spool watch needs a model, and no model provider is configured",
    {
      hint: "Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or OPENAI_BASE_URL alone for a local server (Ollama, vLLM, llama.cpp, LM Studio; docs/providers.md), then run it again",
    },
  );
}

function runElsewhere(ctx: CommandContext, continuity: string, holder: string): number {
  ctx.err(
    `spool: another process (${holder}) is watching continuity ${continuity}; follow it with \`spool tail ${continuity}\`, or stop it first`,
  );
  return 1;
}

/** `log_monitor · openai loop · continuity watch-log_monitor · log (file logs/app.log) from chunk 15 · Ctrl-C stops` */
async function headerLine(
  store: EventStore,
  continuity: string,
  agent: string,
  assembled: AssembledAgent,
  definitions: readonly SourceDefinition[],
): Promise<string> {
  const state = (await store.continuity(continuity))
    ? await readSourcesState(store, continuity)
    : undefined;
  const sources = definitions.map((definition) => {
    const known = state?.sources.get(definition.id);
    return `${definition.id} (${definition.kind} ${oneLine(definition.target)})${standing(known)}`;
  });
  return [
    agent,
    `${assembled.providerName} ${assembled.model}`,
    `continuity ${continuity}`,
    sources.join(", "),
    "Ctrl-C stops",
  ].join(" · ");
}

/** Where a source the log knows stands, as the header says it: ` from chunk 15`, ` exhausted …`. */
function standing(known: SourceState | undefined): string {
  if (!known) return "";
  const read = `${known.chunks} chunk${known.chunks === 1 ? "" : "s"}`;
  if (known.status === "exhausted") return ` exhausted after ${read}`;
  if (known.status === "paused") return ` paused after ${read} (the agent resumes it)`;
  if (known.status === "removed") return " removed";
  const from = known.chunks > 0 ? ` from chunk ${known.chunks + 1}` : "";
  return known.status === "failed" ? ` (failed before; started again)${from}` : from;
}

/** The last line: how to go on, or (every source has ended) how to read them again. */
function goOnLine(
  rows: readonly SourceState[],
  agent: string | undefined,
  continuity: string | undefined,
): string {
  const again = `spool watch${agent ? ` --agent ${agent}` : ""}`;
  if (
    rows.length > 0 &&
    rows.every((row) => row.status === "exhausted" || row.status === "removed")
  ) {
    return `Every source has ended here; \`${again} --continuity <new id>\` reads them again from their start.`;
  }
  return `Run \`${again}${continuity ? ` --continuity ${continuity}` : ""}\` to go on from here.`;
}

/** Where each source stands (`spool sources`' rows), on stdout (stderr beside JSON lines). */
async function printSources(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  json: boolean,
): Promise<SourceState[]> {
  const states = [...(await readSourcesState(store, continuity)).sources.values()];
  const rows = states.map((source) => sourceRow(source, ctx.io.cwd));
  if (rows.length === 0) return states;
  const style = json ? ctx.errStyle : ctx.style;
  for (const line of sourceTable(rows, style)) {
    if (json) ctx.err(line);
    else ctx.out(line);
  }
  return states;
}
