/**
 * Spool's built-in tools: `fs.read`, `fs.list`, `fs.search`, `fs.write` (confined to the
 * workspace), `http.fetch` (allow-listed hosts), `shell.run` (off by default) and `clock.now`,
 * plus `toolCatalogue` to describe any tools to the model. See `docs/tools.md`.
 */
export {
  BUILTIN_TOOL_NAMES,
  type BuiltinToolName,
  type BuiltinToolOptions,
  builtinTools,
} from "./builtin-tools.js";
export { type ClockNowOptions, type ClockNowResult, clockNowTool, zonedTime } from "./clock-now.js";
export { type FsListEntry, type FsListResult, fsListTool } from "./fs-list.js";
export {
  type FsReadBytesResult,
  type FsReadLinesResult,
  type FsToolOptions,
  fsReadTool,
} from "./fs-read.js";
export { type FsSearchResult, fsSearchTool } from "./fs-search.js";
export { type FsWriteResult, fsWriteTool, type WriteMode } from "./fs-write.js";
export { createGlobMatcher } from "./glob.js";
export { effectivePort, type HostRule, isHostAllowed, parseAllowHosts } from "./host-allow-list.js";
export {
  type HttpFetchOptions,
  type HttpFetchResult,
  httpFetchTool,
  MAX_REDIRECTS,
} from "./http-fetch.js";
export { DEFAULT_TOOL_LIMITS, resolveToolLimits, type ToolLimits } from "./limits.js";
export {
  commandEnvironment,
  type ShellRunOptions,
  type ShellRunResult,
  shellRunTool,
} from "./shell-run.js";
export { formatToolCatalogue, type ToolCatalogueEntry, toolCatalogue } from "./tool-catalogue.js";
export { ToolError, type ToolErrorCode, toFsToolError } from "./tool-error.js";
export { SKIPPED_DIRECTORIES } from "./walk.js";
export { createWorkspace, type Workspace, type WorkspacePath } from "./workspace.js";
