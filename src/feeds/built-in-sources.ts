import { environmentSource } from "./environment-source.js";
import type { InternalSources } from "./internal-source.js";
import { randomSource } from "./random-source.js";
import { systemClockSource } from "./system-clock-source.js";

/**
 * The internal sources every feed engine has: `system_clock`, `random` and `environment`.
 * `createFeedEngine({ internalSources })` adds to these (a source of the same name replaces one).
 */
export const BUILT_IN_SOURCES: InternalSources = {
  system_clock: systemClockSource,
  random: randomSource,
  environment: environmentSource,
};
