import {
  type AgentSession,
  type AgentSessionOptions,
  openAgentSession as openAppSession,
} from "../../app/index.js";
import type { EventStore } from "../../log/index.js";
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
  return openAppSession({ workspace: ctx.io.cwd, env: ctx.io.env, store, continuity }, options);
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
