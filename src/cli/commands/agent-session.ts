import {
  type AgentSession,
  type AgentSessionOptions,
  openAgentSession as openAppSession,
} from "../../app/index.js";
import type { EventStore } from "../../log/index.js";
import { type PreparedMcp, prepareAgentMcp, recordMcpListings } from "../../mcp/index.js";
import type { CommandContext } from "../context.js";
import { defaultActor } from "./continuities.js";

export {
  type AgentSession,
  type AgentSessionOptions,
  foregroundDirective,
} from "../../app/index.js";

/** Assembles the agent for `continuity` in the command's workspace and environment, and starts a runtime for it. */
export function openAgentSession(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  options: AgentSessionOptions = {},
): AgentSession {
  return openAppSession(
    {
      workspace: ctx.io.cwd,
      env: ctx.io.env,
      store,
      continuity,
      onTraceError: (error) => ctx.err(`spool: traces: ${error.message}`),
    },
    options,
  );
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
