/**
 * Spool as a service: the HTTP + SSE API over the continuity log (continuities, turns, events by
 * page and live, runs, threads, context, pins, sources and their changes, stream-watch settings,
 * frames), bearer tokens stored hashed in the log,
 * per-continuity roles over the access lists, rate limits, the AI SDK UI message stream for
 * `useChat`, and an OpenAI-compatible chat completions route. See docs/http-api.md.
 */
export { roleIn } from "./access-control.js";
export {
  ACCESS_CONTINUITY,
  type AccessToken,
  AccessTokens,
  type CreatedToken,
  hashSecret,
  type NewToken,
  ROLE_RANK,
  type Role,
} from "./access-tokens.js";
export {
  type AcceptedTurn,
  AgentHost,
  type AgentHostOptions,
  type TurnPolicy,
} from "./agent-host.js";
export { createServer, type MountedRoutes, type ServerDeps } from "./create-server.js";
export {
  DEFAULT_LIVE_BUFFER,
  type LiveFrame,
  LiveHub,
  type LiveHubOptions,
  LiveSubscriber,
} from "./live-hub.js";
export { openaiContinuity } from "./openai-routes.js";
export { type RateDecision, type RateLimitOptions, TokenBuckets } from "./rate-limit.js";
export { type RunningServer, type ServeOptions, serve } from "./serve.js";
export type { ServerEnv, ServerServices } from "./server-env.js";
export { type ErrorBody, errorAnswer, ServerError } from "./server-error.js";
export type { UiChunk } from "./ui-message-stream.js";
