/**
 * The composition root: an agent assembled from the item spaces (directives, manifests, hooks,
 * workflows), the configuration and the environment (provider, key, model tiers), ready for
 * `createAgentRuntime`. Everything here is wiring; the behaviour lives in the modules below.
 */
export { type AssembledAgent, type AssembleOptions, assembleAgent } from "./agent-assembly.js";
export {
  type AgentSession,
  type AgentSessionOptions,
  foregroundDirective,
  openAgentSession,
  type SessionPlace,
} from "./agent-session.js";
export { ContextNotFoundError, type ContextReport, contextReport } from "./context-report.js";
export {
  appendPin,
  MAX_PIN_CHARS,
  type PinRow,
  pinsInForce,
  removePin,
} from "./continuity-pins.js";
export {
  runtimeWatchOf,
  type SessionWatch,
  type SessionWatchOptions,
  startSessionWatch,
} from "./session-watch.js";
export {
  isWorkerThread,
  shortThreadId,
  type ThreadHandoff,
  type ThreadRow,
  ThreadRowsFold,
  type ThreadSeed,
  type ThreadStatus,
} from "./thread-rows.js";
