import {
  type AgentSession,
  type AgentSessionOptions,
  openAgentSession as openAppSession,
} from "../../app/index.js";
import type { EventStore } from "../../log/index.js";
import { type PreparedMcp, prepareAgentMcp, recordMcpListings } from "../../mcp/index.js";
import {
  createMemoryRecaller,
  lazyMemoryIndex,
  MemoryError,
  type MemoryIndex,
  openMemoryIndex,
} from "../../memory/index.js";
import { type CommandContext, parseInteger } from "../context.js";
import { redactSecrets } from "../redact.js";
import { defaultActor } from "./continuities.js";

export {
  type AgentSession,
  type AgentSessionOptions,
  foregroundDirective,
} from "../../app/index.js";

/** Options of the CLI's `openAgentSession`: the app's, and what replay read from the log. */
export interface CliSessionOptions extends AgentSessionOptions {
  /**
   * In replay (`world`): whether the run offered `memory.search` (`foregroundDirective`'s
   * `memory`), so the replayed agent has the same tools. A live session offers it whenever
   * memory is on (`SPOOL_MEMORY_TOKENS` is not 0).
   */
  replayMemory?: boolean;
}

/** Assembles the agent for `continuity` in the command's workspace and environment, and starts a runtime for it. */
export function openAgentSession(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  cliOptions: CliSessionOptions = {},
): AgentSession {
  const { replayMemory, ...options } = cliOptions;
  // Replay offers memory.search exactly when the run did (the log says), whatever the setting.
  const memory =
    options.world && !replayMemory
      ? undefined
      : sessionMemory(ctx, store, options.world !== undefined);
  const session = openAppSession(
    {
      workspace: ctx.io.cwd,
      env: ctx.io.env,
      store,
      continuity,
      onTraceError: (error) => ctx.err(`spool: traces: ${error.message}`),
      onWatchError: (error) =>
        ctx.err(
          `spool: watch: ${redactSecrets(error instanceof Error ? error.message : String(error))}`,
        ),
    },
    !memory
      ? options
      : options.world
        ? // Replay's closed world serves the recorded memory choices and tool results instead of
          // searching, but the agent has the same tools as the run it replays.
          { ...options, memoryIndex: memory.index }
        : { ...options, memory: memory.recaller, memoryIndex: memory.index },
  );
  if (!memory) return session;
  return {
    ...session,
    async close() {
      try {
        await session.close();
      } finally {
        await memory.index.close();
      }
    },
  };
}

/** Tokens of memory from other continuities a thread starts with (`SPOOL_MEMORY_TOKENS`). */
const DEFAULT_MEMORY_TOKENS = 1000;

/**
 * Memory from the store's other continuities, its index opened on the first recall or search;
 * `SPOOL_MEMORY_TOKENS` sets its budget, 0 turns it off (undefined then). Whether the agent has
 * memory depends on that setting alone, never on whether the index opens (replay must give the
 * agent the same tools): an index that cannot open fails each search with a typed error, and a
 * recall that fails leaves the thread without memory.
 */
function sessionMemory(ctx: CommandContext, store: EventStore, replaying = false) {
  const tokens =
    parseInteger("memory", "SPOOL_MEMORY_TOKENS", ctx.io.env.SPOOL_MEMORY_TOKENS, 0) ??
    DEFAULT_MEMORY_TOKENS;
  if (tokens === 0 && !replaying) return undefined;
  const index = sessionMemoryIndex(ctx, store) ?? unreachableMemoryIndex(store.kind);
  return { index, recaller: createMemoryRecaller(index, { tokens }) };
}

/** A memory index whose every use fails: a PostgreSQL store whose URL this process lacks. */
function unreachableMemoryIndex(kind: EventStore["kind"]): MemoryIndex {
  return lazyMemoryIndex(kind, () =>
    Promise.reject(
      new MemoryError(
        "memory.storage",
        "the memory index of a PostgreSQL store opens only when SPOOL_DB names that store",
        { hint: "Set SPOOL_DB to the store's postgres:// URL instead of passing --db" },
      ),
    ),
  );
}

/**
 * The memory index of `store`, opened (and caught up with the log) on its first use; undefined
 * when the store's address cannot be opened again (a PostgreSQL store not named by `SPOOL_DB`).
 * The caller closes it.
 */
export function sessionMemoryIndex(
  ctx: CommandContext,
  store: EventStore,
): MemoryIndex | undefined {
  const db = memoryLocation(store, ctx.io.env);
  if (db === undefined) return undefined;
  return lazyMemoryIndex(store.kind, () =>
    openMemoryIndex({ store, db, cwd: ctx.io.cwd, env: ctx.io.env }),
  );
}

/**
 * Where the memory index opens: beside a SQLite store's file; for PostgreSQL, the URL in
 * `SPOOL_DB` when it is the store's own (the open store keeps no password).
 */
function memoryLocation(
  store: EventStore,
  env: Record<string, string | undefined>,
): string | undefined {
  if (store.kind === "sqlite") return store.location;
  const url = env.SPOOL_DB;
  return url !== undefined && redactSecrets(url) === store.location ? url : undefined;
}

/**
 * The MCP servers of the agent `agent` (default `assistant`) and their tools, for
 * `AgentSessionOptions.mcp`: the tools the log recorded, or with `discover` (every command but
 * replay) listed from a server it has none of. Call `recordSessionMcp` once the continuity exists.
 */
export function sessionMcp(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  agent: string | undefined,
  discover = true,
): Promise<PreparedMcp> {
  return prepareAgentMcp({
    workspace: ctx.io.cwd,
    env: ctx.io.env,
    store,
    continuity,
    discover,
    ...(agent !== undefined ? { agent } : {}),
  });
}

/**
 * Records the tools `sessionMcp` newly listed, and returns one line per server that could not be
 * listed (for the command to show); call it once the continuity exists.
 */
export async function recordSessionMcp(store: EventStore, mcp: PreparedMcp): Promise<string[]> {
  await recordMcpListings(store, mcp);
  return [...mcp.failed].map(
    ([server, why]) => `MCP server "${server}" offers no tools this session: ${why}`,
  );
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
