import type { DirectiveLimits } from "./directive.js";

/** The limit names, as `DirectiveLimits` spells them. */
export const LIMIT_NAMES = [
  "maxTurns",
  "maxTokens",
  "maxSpendUsd",
  "maxWallSeconds",
  "maxSpawnDepth",
] as const;

/** One of `LIMIT_NAMES`. */
export type LimitName = (typeof LIMIT_NAMES)[number];

/** What a run has used so far, in the units of `DirectiveLimits`. Absent counts as 0. */
export interface LimitUsage {
  turns?: number;
  tokens?: number;
  spendUsd?: number;
  wallSeconds?: number;
  spawnDepth?: number;
}

/** A limit a run reached: which, the value used and the limit. */
export interface ReachedLimit {
  limit: LimitName;
  used: number;
  max: number;
  /** `max_turns reached: 10 of 10`, in the file's spelling. */
  message: string;
}

const USAGE_KEY: Record<LimitName, keyof LimitUsage> = {
  maxTurns: "turns",
  maxTokens: "tokens",
  maxSpendUsd: "spendUsd",
  maxWallSeconds: "wallSeconds",
  maxSpawnDepth: "spawnDepth",
};

const FILE_NAME: Record<LimitName, string> = {
  maxTurns: "max_turns",
  maxTokens: "max_tokens",
  maxSpendUsd: "max_spend",
  maxWallSeconds: "max_wall_seconds",
  maxSpawnDepth: "max_spawn_depth",
};

/**
 * The limits in force when a manifest's limits tighten a directive's: for each limit the smaller
 * of the two; a limit either one sets applies. Pure.
 */
export function effectiveLimits(
  directive: DirectiveLimits,
  manifest: DirectiveLimits = {},
): DirectiveLimits {
  const result: DirectiveLimits = {};
  for (const name of LIMIT_NAMES) {
    const values = [directive[name], manifest[name]].filter(
      (value): value is number => value !== undefined,
    );
    if (values.length > 0) result[name] = Math.min(...values);
  }
  return result;
}

/**
 * The first limit `usage` has reached (used ≥ max; spawn depth only when it exceeds the max, as a
 * depth equal to the max is allowed), in `LIMIT_NAMES` order, or `undefined`. Pure.
 */
export function reachedLimit(limits: DirectiveLimits, usage: LimitUsage): ReachedLimit | undefined {
  for (const name of LIMIT_NAMES) {
    const max = limits[name];
    if (max === undefined) continue;
    const used = usage[USAGE_KEY[name]] ?? 0;
    const reached = name === "maxSpawnDepth" ? used > max : used >= max;
    if (reached) {
      const unit = name === "maxSpendUsd" ? "$" : "";
      return {
        limit: name,
        used,
        max,
        message: `${FILE_NAME[name]} reached: ${unit}${used} of ${unit}${max}`,
      };
    }
  }
  return undefined;
}
