import type { AnyTool } from "../actions/index.js";
import { ConfigError } from "../spec/index.js";
import { clockNowTool } from "./clock-now.js";
import { fsListTool } from "./fs-list.js";
import { fsReadTool } from "./fs-read.js";
import { fsSearchTool } from "./fs-search.js";
import { fsWriteTool } from "./fs-write.js";
import { parseAllowHosts } from "./host-allow-list.js";
import { httpFetchTool } from "./http-fetch.js";
import { resolveToolLimits, type ToolLimits } from "./limits.js";
import { shellRunTool } from "./shell-run.js";
import { createWorkspace } from "./workspace.js";

/** The names of the built-in tools, in the order `builtinTools` returns them. */
export const BUILTIN_TOOL_NAMES = [
  "fs.read",
  "fs.list",
  "fs.search",
  "fs.write",
  "http.fetch",
  "shell.run",
  "clock.now",
] as const;

/** One built-in tool's name. */
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** How the built-in tools are set up; mirrors the agent manifest's `tools` section. */
export interface BuiltinToolOptions {
  /** The folder the fs tools and `shell.run` are confined to (made absolute). */
  workspace: string;
  http?: {
    /** `tools.http.fetch.allow_hosts`: `host`, `*.host`, `host:port`. Absent or empty: none. */
    allowHosts: string[];
    /** The `fetch` to use (default the global one). */
    fetch?: typeof globalThis.fetch;
  };
  shell?: {
    /** `tools.shell.run.enabled`; false (the default) makes every call fail with a hint. */
    enabled: boolean;
    /** Extra environment variables for commands. */
    env?: Record<string, string>;
  };
  /** The clock `clock.now` reads (default `() => new Date()`). */
  clock?: () => Date;
  /** `clock.now`'s zone when a call names none (default the host's zone). */
  timezone?: string;
  /** Caps over `DEFAULT_TOOL_LIMITS`. */
  limits?: Partial<ToolLimits>;
}

/**
 * The built-in tools (`BUILTIN_TOOL_NAMES`), ready for `createToolRegistry`. Every tool is
 * returned even when its feature is off: `http.fetch` with no allowed host and a disabled
 * `shell.run` refuse each call with a typed error that names the setting to change.
 *
 * Throws `ConfigError` for an empty workspace, a malformed allow-list entry or a bad cap; it
 * touches no file (a missing workspace is reported per call as `tool.workspace-unavailable`).
 * Permission gating by directive globs is the runtime's, applied at dispatch; not done here.
 */
export function builtinTools(options: BuiltinToolOptions): AnyTool[] {
  if (typeof options.workspace !== "string" || options.workspace.trim() === "") {
    throw new ConfigError("config.tools.workspace", "the tools' workspace folder is not set", {
      hint: "Set `workspace` to the folder the agent may read and write",
    });
  }
  const limits = resolveToolLimits(options.limits);
  const workspace = createWorkspace(options.workspace);
  const fs = { workspace, limits };
  return [
    fsReadTool(fs),
    fsListTool(fs),
    fsSearchTool(fs),
    fsWriteTool(fs),
    httpFetchTool({
      rules: parseAllowHosts(options.http?.allowHosts ?? []),
      limits,
      ...(options.http?.fetch ? { fetch: options.http.fetch } : {}),
    }),
    shellRunTool({
      enabled: options.shell?.enabled === true,
      ...(options.shell?.env ? { env: options.shell.env } : {}),
      workspace,
      limits,
    }),
    clockNowTool({
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.timezone ? { timezone: options.timezone } : {}),
    }),
  ];
}
