import type { ActionExecutor, AnyTool, CheckedActionExecutor } from "../actions/index.js";
import { emptyFeedState, type FeedRegistryState } from "../feeds/index.js";
import { type MemoryRecaller, recordedRecaller } from "../memory/index.js";
import type { ModelWindow, Provider } from "../providers/index.js";
import type {
  AgentRuntimeOptions,
  AgentSpec,
  InterceptedCall,
  RecordedStepFeeds,
} from "../runtime/index.js";
import { SpoolError } from "../spec/index.js";

/** What a replayed runtime tried to reach outside its log. */
export interface OutsideCall {
  /** `tool`, `llm`, `relic`, `workflow`, `feed` (a feed source's executor), `source` or `fetch`. */
  kind: string;
  /** The tool, relic method, workflow or URL reached. */
  name: string;
}

/**
 * A replayed runtime reached something outside the log: a tool, a relic, a workflow, an `llm`
 * executor, a feed source or the network. Replay answers every effect from the log, so this is
 * always a replay defect (or a log that lacks a result), never something to retry.
 */
export class ReplayOutsideCallError extends SpoolError {
  readonly reached: OutsideCall;

  constructor(reached: OutsideCall) {
    super(
      "replay.outside-call",
      `replay reached ${reached.kind} "${reached.name}" outside the log: a replay calls nothing`,
      {
        hint: "The log has no recorded result for this call; report it with the continuity's log (`spool log show`)",
        details: { ...reached },
      },
    );
    this.reached = reached;
  }
}

/** What a replay world is made of (replay builds it from the log: `replayContinuity`). */
export interface ReplayWorldParts {
  /** Answers each model request with the output the log recorded for it. */
  provider: Provider;
  /** The recorded result of each action attempt (see `AgentRuntimeOptions.intercept`). */
  intercept(call: InterceptedCall): Promise<unknown>;
  /** Each step's rendered feeds and `$id` values as the log recorded them. */
  recordedFeeds(step: string): RecordedStepFeeds | undefined;
  /** The feed registry the log had when the action `actionId` of `step` ran (default: none). */
  recordedFeedRegistry?(step: string, actionId: string): FeedRegistryState;
  /** Milliseconds since the epoch as the log recorded them (the time replay has reached). */
  now(): number;
  /** The next window the log recorded for `model` (`model.described`), in the order logged. */
  recordedWindow?(model: string): ModelWindow | undefined;
  /**
   * The memory each thread was given, as the log recorded it (`memory.recalled`; default none):
   * a replay never searches the memory index.
   */
  recordedMemory?: MemoryRecaller;
}

/**
 * The closed world a replay runs in: the only provider serves recorded outputs, every action
 * attempt is answered from the log, the clock serves logged times, retries never wait, and every
 * executor, tool, feed source, source adapter and `fetch` that a runtime could reach throws
 * `ReplayOutsideCallError` (code `replay.outside-call`) naming what was reached, and records it
 * in `reached`. Composite executors (workflows) are left to run: they reach nothing themselves,
 * and each inner action they run is answered from the log like any other attempt. Pass it to
 * `createAgentRuntime` as `world`: the runtime then runs nothing but its own decisions. It never
 * reads or writes a store.
 */
export interface ReplayWorld {
  readonly provider: Provider;
  intercept(call: InterceptedCall): Promise<unknown>;
  recordedFeeds(step: string): RecordedStepFeeds | undefined;
  recordedFeedRegistry(step: string, actionId: string): FeedRegistryState;
  now(): number;
  /** A `fetch` that throws `replay.outside-call` (replay installs it globally while it runs). */
  readonly fetch: typeof fetch;
  /** Everything the runtime tried to reach outside, in order: empty for a sound replay. */
  readonly reached: readonly OutsideCall[];
  /** `options` with everything outside replaced by this world (see the interface's contract). */
  enclose(options: AgentRuntimeOptions): AgentRuntimeOptions;
}

/** Builds the closed world of a replay from its parts (see `ReplayWorld`). */
export function createReplayWorld(parts: ReplayWorldParts): ReplayWorld {
  const reached: OutsideCall[] = [];
  const recordedFeedRegistry = parts.recordedFeedRegistry ?? (() => emptyFeedState());
  const outside = (call: OutsideCall): never => {
    reached.push(call);
    throw new ReplayOutsideCallError(call);
  };
  const sealExecutor = <T extends ActionExecutor | CheckedActionExecutor>(
    executor: T,
    kind: string = executor.type,
  ): T => ({
    ...executor,
    execute: (call: { name: string }) => outside({ kind, name: call.name }),
  });
  const sealTool = (tool: AnyTool): AnyTool => ({
    ...tool,
    execute: () => outside({ kind: "tool", name: tool.name }),
  });
  const sealSpec = (spec: AgentSpec): AgentSpec => ({ ...spec, tools: spec.tools.map(sealTool) });
  const fetchOutside = ((input: Parameters<typeof fetch>[0]) =>
    Promise.reject(
      (() => {
        const name = typeof input === "string" ? input : "url" in input ? input.url : String(input);
        reached.push({ kind: "fetch", name });
        return new ReplayOutsideCallError({ kind: "fetch", name });
      })(),
    )) as typeof fetch;

  return {
    provider: parts.provider,
    intercept: parts.intercept,
    recordedFeeds: parts.recordedFeeds,
    recordedFeedRegistry,
    now: parts.now,
    fetch: fetchOutside,
    reached,
    enclose(options) {
      const { agents, summarizerSpec, stepExecutors, feeds, sources } = options;
      return {
        ...options,
        provider: parts.provider,
        agent: sealSpec(options.agent),
        ...(parts.recordedWindow
          ? { modelWindows: { ...options.modelWindows, recorded: parts.recordedWindow } }
          : {}),
        ...(agents
          ? {
              agents: {
                get: (name: string) => {
                  const spec = agents.get(name);
                  return spec && sealSpec(spec);
                },
                names: () => agents.names(),
              },
            }
          : {}),
        ...(summarizerSpec
          ? {
              summarizerSpec: (name: string) => {
                const spec = summarizerSpec(name);
                return spec && sealSpec(spec);
              },
            }
          : {}),
        executors: (options.executors ?? []).map((executor) => sealExecutor(executor)),
        ...(stepExecutors
          ? {
              // A composite executor (a workflow) runs: its inner actions come back through
              // the runtime's path, where `intercept` answers them from the log.
              stepExecutors: (scope) =>
                stepExecutors(scope).map((executor) =>
                  executor.composite ? executor : sealExecutor(executor),
                ),
            }
          : {}),
        ...(feeds
          ? {
              feeds: {
                ...feeds,
                executors: (feeds.executors ?? []).map((executor) =>
                  sealExecutor(executor, "feed"),
                ),
              },
            }
          : {}),
        ...(sources
          ? {
              // A replayed runtime starts no source; an adapter it would make is reached outside.
              sources: {
                ...sources,
                adapters: Object.fromEntries(
                  Object.keys(sources.adapters).map((kind) => [
                    kind,
                    (definition: { id: string }) =>
                      outside({ kind: "source", name: definition.id }),
                  ]),
                ),
              },
            }
          : {}),
        intercept: parts.intercept,
        recordedFeeds: parts.recordedFeeds,
        recordedFeedRegistry,
        memory: parts.recordedMemory ?? recordedRecaller([]),
        now: parts.now,
        // Backoff jitter decides nothing replay compares (delays are times); sleeps end at once.
        random: () => 0.5,
        sleep: (_ms, signal) =>
          signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve(),
      };
    },
  };
}
