import type { EventStore } from "../log/index.js";
import {
  type AgentRuntime,
  type AgentRuntimeOptions,
  createAgentRuntime,
  foldContinuityState,
  type RunObserver,
} from "../runtime/index.js";
import { type EventOf, isEvent, type SpoolEvent } from "../spec/index.js";
import { type LiveTraces, startLiveTraces } from "../telemetry/index.js";
import { loadSigner, resolveKeysDir } from "../transcript/index.js";
import { type AssembledAgent, type AssembleOptions, assembleAgent } from "./agent-assembly.js";
import { runtimeWatchOf, type SessionWatch, startSessionWatch } from "./session-watch.js";

/** Where an agent session runs: the workspace and environment it is assembled from, its store and continuity. */
export interface SessionPlace {
  workspace: string;
  env: Record<string, string | undefined>;
  store: EventStore;
  continuity: string;
  /**
   * Told (once) why live trace export could not start or failed: a problem with it is never the
   * session's failure. Silent when absent.
   */
  onTraceError?: (error: Error) => void;
  /**
   * Told why the stream watch (the manifest's `watch:` section with a `source`) could not start,
   * or of an event it could not log: a watch problem is never the session's failure. Silent when
   * absent.
   */
  onWatchError?: (error: unknown) => void;
}

/** A runtime over one continuity, assembled from the item spaces and the environment. */
export interface AgentSession {
  runtime: AgentRuntime;
  assembled: AssembledAgent;
  /**
   * The stream watch beside the runtime, once started (`undefined` when the manifest has no
   * `watch:` source, in replay, or when it failed to start: `onWatchError` says why).
   */
  watch?: Promise<SessionWatch | undefined>;
  /** Stops the runtime (cancelling what runs) and the relics; the store stays open. */
  close(): Promise<void>;
}

/** Options of `openAgentSession`. */
export interface AgentSessionOptions
  extends Omit<AssembleOptions, "workspace" | "store" | "continuity" | "env"> {
  observer?: RunObserver;
  /** Replay's recorded results (see `AgentRuntimeOptions.intercept`). */
  intercept?: AgentRuntimeOptions["intercept"];
  /** Replay's recorded context feeds (see `AgentRuntimeOptions.recordedFeeds`). */
  recordedFeeds?: AgentRuntimeOptions["recordedFeeds"];
  /** Replay's closed world (see `AgentRuntimeOptions.world`). */
  world?: AgentRuntimeOptions["world"];
  /**
   * Hold the lease of the continuities the session runs (see `AgentRuntimeOptions.lease`): every
   * command that runs a continuity of the user's store passes it; replay, on a scratch store, not.
   */
  lease?: AgentRuntimeOptions["lease"];
  /**
   * Write each thread's live `transcript.jsonl` and `knowledge.md` in `<threadsDir>/<thread>/`
   * (`resolveThreadsDir`): chat, run and resume pass it; replay, on a scratch store, not.
   */
  threadsDir?: string;
  /** Recalls memory from other continuities at a thread's start and handoff (`AgentRuntimeOptions.memory`). */
  memory?: AgentRuntimeOptions["memory"];
  /** The stream watch's clock: frame times and its idle timer's looks (default `Date.now`). */
  watchClock?: () => number;
  /** Starts the idle timer of the stream watch (default `setInterval`, unref'd); returns its stop. */
  watchTimer?: (every: number, tick: () => void) => () => void;
}

/** Assembles the agent for `continuity` and starts a runtime for it. */
export function openAgentSession(
  where: SessionPlace,
  options: AgentSessionOptions = {},
): AgentSession {
  const { workspace, env, store, continuity } = where;
  const {
    observer,
    intercept,
    recordedFeeds,
    world,
    lease,
    threadsDir,
    memory,
    watchClock,
    watchTimer,
    ...assemble
  } = options;
  const assembled = assembleAgent({
    ...assemble,
    workspace,
    store,
    continuity,
    env,
  });
  // Steps are signed when the workspace has a key (`spool keys init`).
  const signer = loadSigner(resolveKeysDir({ cwd: workspace, env }));
  // Replay's log already holds what the watch saw: it starts none.
  const watchSection = world === undefined ? assembled.watch : undefined;
  let watching: SessionWatch | undefined;
  const runtime = createAgentRuntime({
    store,
    ...assembled.options,
    ...(signer ? { signer } : {}),
    ...(observer ? { observer } : {}),
    ...(intercept ? { intercept } : {}),
    ...(recordedFeeds ? { recordedFeeds } : {}),
    ...(world ? { world } : {}),
    ...(lease ? { lease } : {}),
    ...(threadsDir !== undefined ? { threadFiles: { dir: threadsDir } } : {}),
    ...(memory ? { memory } : {}),
    ...(watchSection?.source
      ? {
          watch: runtimeWatchOf(
            () => watching,
            () => watch,
          ),
        }
      : {}),
  });
  let stopTimer: (() => void) | undefined;
  const watch = watchSection?.source
    ? startSessionWatch({
        store,
        continuity,
        workspace,
        env,
        settings: { ...watchSection, source: watchSection.source },
        runtime,
        provider: assembled.options.provider,
        model: assembled.model,
        instructions: assembled.options.agent.instructions,
        ...(assembled.browser ? { browser: assembled.browser } : {}),
        ...(watchClock ? { clock: watchClock } : {}),
        ...(where.onWatchError ? { onError: where.onWatchError } : {}),
      }).then(
        (started) => {
          watching = started;
          const clock = watchClock ?? Date.now;
          const every = (started.watch.state.settings.noteIdleIntervalSeconds * 1000) / 2;
          stopTimer = (watchTimer ?? intervalTimer)(every, () => void started.tick(clock()));
          return started;
        },
        (error: unknown) => {
          where.onWatchError?.(error);
          return undefined;
        },
      )
    : undefined;
  // Replay (a closed world on a scratch store) exports nothing; the others export live spans
  // when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing of OpenTelemetry loads otherwise).
  const traces = world ? undefined : liveTraces(where);
  return {
    runtime,
    assembled,
    ...(watch ? { watch } : {}),
    async close() {
      try {
        const started = await watch;
        stopTimer?.();
        await started?.stop();
        await runtime.close();
      } finally {
        await (await traces)?.close();
        await assembled.close();
      }
    },
  };
}

/** The default idle timer of a session's watch: `setInterval`, not keeping the process alive. */
function intervalTimer(every: number, tick: () => void): () => void {
  const timer = setInterval(tick, every);
  timer.unref();
  return () => clearInterval(timer);
}

/** Starts live trace export for the session; a problem with it is told once, never fatal. */
function liveTraces(where: SessionPlace): Promise<LiveTraces | undefined> {
  let told = false;
  const tell = (error: Error) => {
    if (told) return;
    told = true;
    where.onTraceError?.(error);
  };
  const { store, continuity, env } = where;
  return startLiveTraces({ store, continuity, env, onError: tell }).catch((error: Error) => {
    tell(error);
    return undefined;
  });
}

/**
 * The directive (and model) the continuity's foreground thread runs, when it has one, the agent
 * manifest it runs with (recorded on `thread.started`; for logs written before that, the
 * continuity's label from `ensureContinuity`) and the inputs its chain was started with.
 */
export async function foregroundDirective(
  store: EventStore,
  continuity: string,
): Promise<
  | {
      directive: string;
      model?: string;
      agent?: string;
      inputs?: Record<string, unknown>;
      /** A thread of the continuity was offered `memory.search` (`thread.started.memory`). */
      memory?: true;
    }
  | undefined
> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({
    continuity,
    types: ["continuity.created", "thread.started"],
  })) {
    events.push(event);
  }
  const state = foldContinuityState(events);
  const thread = state.foreground ? state.threads.get(state.foreground) : undefined;
  const created = events.find((event): event is EventOf<"continuity.created"> =>
    isEvent(event, "continuity.created"),
  );
  const agent = thread?.agent ?? created?.data.labels?.agent;
  const inputs = thread ? chainInputs(events, thread.id) : undefined;
  return thread
    ? {
        directive: thread.directive,
        ...(thread.model !== undefined ? { model: thread.model } : {}),
        ...(agent !== undefined ? { agent } : {}),
        ...(inputs !== undefined ? { inputs } : {}),
        ...(events.some((event) => isEvent(event, "thread.started") && event.data.memory === true)
          ? { memory: true as const }
          : {}),
      }
    : undefined;
}

/** The inputs recorded on the `thread.started` of the chain `thread` continues (its root's). */
function chainInputs(events: SpoolEvent[], thread: string): Record<string, unknown> | undefined {
  const started = (id: string) =>
    events.find(
      (event): event is EventOf<"thread.started"> =>
        isEvent(event, "thread.started") && event.stream.id === id,
    );
  const own = started(thread);
  return (started(own?.data.chain_root ?? thread) ?? own)?.data.inputs;
}
