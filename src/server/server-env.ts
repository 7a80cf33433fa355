import type { EventStore } from "../log/index.js";
import type { ActorRosters } from "../runtime/index.js";
import type { AccessToken, AccessTokens } from "./access-tokens.js";
import type { AgentHost } from "./agent-host.js";
import type { LiveHub } from "./live-hub.js";

/** What every route reaches: the store, the agents, the tokens and the access lists. */
export interface ServerServices {
  store: EventStore;
  host: AgentHost;
  tokens: AccessTokens;
  rosters: ActorRosters;
  /** Milliseconds between SSE heartbeats. */
  heartbeatMs: number;
  /** The live-event subscriptions every SSE connection shares (one per continuity). */
  live: LiveHub;
}

/** Hono's environment of the service's routes: the authenticated token, set by the auth layer. */
export interface ServerEnv {
  Variables: { token: AccessToken };
}
