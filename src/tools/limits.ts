import { ConfigError } from "../spec/index.js";

/** The caps the built-in tools apply; every one bounds memory, time or what the model sees. */
export interface ToolLimits {
  /** Most bytes `fs.read` returns in one call (default 256 KiB). */
  readBytes: number;
  /** Most entries `fs.list` returns (default 1,000). */
  listEntries: number;
  /** Most matches `fs.search` returns (default 200). */
  searchMatches: number;
  /** Files larger than this are skipped by `fs.search` (default 1 MiB). */
  searchFileBytes: number;
  /** Most directory entries `fs.list` and `fs.search` visit in one call (default 50,000). */
  walkEntries: number;
  /** Most bytes `fs.write` accepts in `content` (default 5 MiB). */
  writeBytes: number;
  /** Most body bytes `http.fetch` returns (default 256 KiB). */
  fetchBytes: number;
  /** `http.fetch` gives up after this long, redirects included (default 30 s). */
  fetchTimeoutMs: number;
  /** Most bytes kept of each of `shell.run`'s stdout and stderr (default 64 KiB). */
  shellOutputBytes: number;
  /** `shell.run`'s default timeout (default 60 s). */
  shellTimeoutMs: number;
  /** The longest timeout a `shell.run` call may ask for (default 10 min). */
  shellMaxTimeoutMs: number;
}

/** The defaults of every cap. */
export const DEFAULT_TOOL_LIMITS: Readonly<ToolLimits> = Object.freeze({
  readBytes: 256 * 1024,
  listEntries: 1_000,
  searchMatches: 200,
  searchFileBytes: 1024 * 1024,
  walkEntries: 50_000,
  writeBytes: 5 * 1024 * 1024,
  fetchBytes: 256 * 1024,
  fetchTimeoutMs: 30_000,
  shellOutputBytes: 64 * 1024,
  shellTimeoutMs: 60_000,
  shellMaxTimeoutMs: 600_000,
});

/**
 * `overrides` over the defaults. Throws `ConfigError` (`config.tools.limits`) naming the cap when
 * one is not a positive integer.
 */
export function resolveToolLimits(overrides: Partial<ToolLimits> = {}): ToolLimits {
  const limits = { ...DEFAULT_TOOL_LIMITS };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_TOOL_LIMITS)) {
      throw new ConfigError("config.tools.limits", `tools.limits has no cap named "${key}"`, {
        hint: `Use one of: ${Object.keys(DEFAULT_TOOL_LIMITS).join(", ")}`,
      });
    }
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
      throw new ConfigError(
        "config.tools.limits",
        `tools.limits.${key} must be a positive integer`,
        {
          hint: `Set it to a whole number above 0 or leave it out (default ${DEFAULT_TOOL_LIMITS[key as keyof ToolLimits]})`,
        },
      );
    }
    limits[key as keyof ToolLimits] = value;
  }
  return limits;
}
