/**
 * Exact replay of a continuity from its log: a runtime re-derives every decision over a scratch
 * store in a closed world (tools, providers, relics, the clock and the network answer from the
 * log or fail), and every event it derives is compared with the logged one, lane by lane.
 */
export { type ReplayOptions, type ReplayReport, replayContinuity } from "./replay.js";
export { type CancelPoint, cancelPoints } from "./replay-cancels.js";
export {
  comparable,
  isCompared,
  isInput,
  LaneMatcher,
  laneOf,
  type ReplayDifference,
  UNCOMPARED_TYPES,
} from "./replay-compare.js";
export { createReplayProvider, messageParts } from "./replay-provider.js";
export {
  createReplayWorld,
  type OutsideCall,
  ReplayOutsideCallError,
  type ReplayWorld,
  type ReplayWorldParts,
} from "./replay-world.js";
export {
  createVerifyingStore,
  type DerivedEvent,
  type SettleOutcome,
  type VerifyingStore,
  type VerifyingStoreOptions,
} from "./verifying-store.js";
