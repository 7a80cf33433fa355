/**
 * The composition root: an agent assembled from the item spaces (directives, manifests, hooks,
 * workflows), the configuration and the environment (provider, key, model tiers), ready for
 * `createAgentRuntime`. Everything here is wiring; the behaviour lives in the modules below.
 */
export { type AssembledAgent, type AssembleOptions, assembleAgent } from "./agent-assembly.js";
