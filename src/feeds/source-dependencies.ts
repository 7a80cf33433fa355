import type { ActionExecutor } from "../actions/index.js";
import { ConfigError } from "../spec/index.js";
import { BUILT_IN_SOURCES } from "./built-in-sources.js";
import { systemFeedClock, systemFeedTimers } from "./feed-clock.js";
import type { FeedEngineOptions } from "./feed-engine.js";
import type { SourceDependencies } from "./read-feed-source.js";

/** How long a source read may take by default, in milliseconds. */
export const DEFAULT_SOURCE_TIMEOUT_MS = 30_000;

/**
 * What the engine's source reads are given: the options' injected parts, with their defaults
 * (system clock and timers, crypto randomness, `process.env`); the built-in internal sources
 * with the options' beside them; the environment allow-list of the manifest plus the options'.
 * Throws `ConfigError` for two executors of one type.
 */
export function sourceDependencies(options: FeedEngineOptions): SourceDependencies {
  const executors = new Map<string, ActionExecutor>();
  for (const executor of options.executors ?? []) {
    if (executors.has(executor.type)) {
      throw new ConfigError(
        "config.feeds",
        `two ${executor.type} executors were given to the feed engine`,
        { hint: "Pass one executor per action type" },
      );
    }
    executors.set(executor.type, executor);
  }
  const fromManifest = options.manifest?.environment;
  return {
    internalSources: { ...BUILT_IN_SOURCES, ...options.internalSources },
    executors,
    clock: options.clock ?? systemFeedClock,
    timers: options.timers ?? systemFeedTimers,
    random: options.random ?? cryptoRandom,
    env: options.env ?? process.env,
    environment: {
      allow: [...(fromManifest?.allow ?? []), ...(options.environment?.allow ?? [])],
      allowSecrets: [
        ...(fromManifest?.allowSecrets ?? []),
        ...(options.environment?.allowSecrets ?? []),
      ],
    },
    timeoutMs: options.sourceTimeoutMs ?? DEFAULT_SOURCE_TIMEOUT_MS,
  };
}

/** A number in [0, 1) from `crypto.getRandomValues`. */
function cryptoRandom(): number {
  return globalThis.crypto.getRandomValues(new Uint32Array(1))[0]! / 2 ** 32;
}
