import { type AssembledAgent, type AssembleOptions, assembleAgent } from "../../app/index.js";
import type { EventStore } from "../../log/index.js";
import { createMemoryRecaller, lazyMemoryIndex, openMemoryIndex } from "../../memory/index.js";
import {
  type AgentRuntime,
  type AgentRuntimeOptions,
  createAgentRuntime,
  foldContinuityState,
  type RunObserver,
} from "../../runtime/index.js";
import { type EventOf, isEvent, type SpoolEvent } from "../../spec/index.js";
import { loadSigner, resolveKeysDir } from "../../transcript/index.js";
import { type CommandContext, parseInteger } from "../context.js";
import { redactSecrets } from "../redact.js";
import { defaultActor } from "./continuities.js";

/** A runtime over one continuity, assembled from the item spaces and the environment. */
export interface AgentSession {
  runtime: AgentRuntime;
  assembled: AssembledAgent;
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
}

/** Tokens of memory from other continuities a thread starts with (`SPOOL_MEMORY_TOKENS`). */
const DEFAULT_MEMORY_TOKENS = 1000;

/** Assembles the agent for `continuity` and starts a runtime for it. */
export function openAgentSession(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  options: AgentSessionOptions = {},
): AgentSession {
  const { observer, intercept, recordedFeeds, world, lease, threadsDir, ...assemble } = options;
  const assembled = assembleAgent({
    ...assemble,
    workspace: ctx.io.cwd,
    store,
    continuity,
    env: ctx.io.env,
  });
  // Steps are signed when the workspace has a key (`spool keys init`).
  const signer = loadSigner(resolveKeysDir({ cwd: ctx.io.cwd, env: ctx.io.env }));
  // Memory from the store's other continuities, opened on the first recall (replay's world
  // serves the recorded choices instead). SPOOL_MEMORY_TOKENS sets its budget; 0 turns it off.
  const memoryTokens =
    parseInteger("memory", "SPOOL_MEMORY_TOKENS", ctx.io.env.SPOOL_MEMORY_TOKENS, 0) ??
    DEFAULT_MEMORY_TOKENS;
  const memoryDb = memoryLocation(store, ctx.io.env);
  const memory =
    world || memoryTokens === 0 || memoryDb === undefined
      ? undefined
      : lazyMemoryIndex(store.kind, () =>
          openMemoryIndex({ store, db: memoryDb, cwd: ctx.io.cwd, env: ctx.io.env }),
        );
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
    ...(memory ? { memory: createMemoryRecaller(memory, { tokens: memoryTokens }) } : {}),
  });
  return {
    runtime,
    assembled,
    async close() {
      await runtime.close();
      await assembled.close();
      await memory?.close();
    },
  };
}

/**
 * Makes sure `continuity` exists, appending `continuity.created` when it does not. `agent`, the
 * agent manifest its runs use, is kept in its labels: `spool resume` and `spool replay` assemble
 * the same agent from it (the manifest changes the tools, their catalogue in the prompt, the
 * limits and the internal-action policy).
 */
export async function ensureContinuity(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  title: string,
  kind: string,
  agent?: string,
): Promise<boolean> {
  if (await store.continuity(continuity)) return false;
  await store.append({
    continuity,
    type: "continuity.created",
    actor: defaultActor(ctx),
    origin: "cli",
    data: {
      title,
      workspace: ctx.io.cwd,
      labels: { kind, ...(agent !== undefined ? { agent } : {}) },
    },
  });
  return true;
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
  | { directive: string; model?: string; agent?: string; inputs?: Record<string, unknown> }
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

/**
 * Where the memory of `store` is opened from: a SQLite store's own file; a PostgreSQL store's URL
 * when `SPOOL_DB` names it (an open store keeps no password, so one given only by `--db` has no
 * memory in this session). `undefined`: none.
 */
function memoryLocation(
  store: EventStore,
  env: Record<string, string | undefined>,
): string | undefined {
  if (store.kind === "sqlite") return store.location;
  const url = env.SPOOL_DB;
  return url !== undefined && redactSecrets(url) === store.location ? url : undefined;
}
