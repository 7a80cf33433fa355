import type { AgentManifest } from "../directives/index.js";
import { type AgentWatchSettings, readWatchSection } from "../frames/index.js";
import { ConfigError } from "../spec/index.js";

/**
 * The stream-watch settings of a manifest with a `watch:` section (legacy keys migrated, with
 * their report), or `undefined` when it has none; a bad section is the manifest's `ConfigError`,
 * each issue at its line (the same report as a bad `browser:` or `sources:` section).
 */
export function agentWatch(manifest: AgentManifest): AgentWatchSettings | undefined {
  try {
    return readWatchSection(manifest.watch);
  } catch (error) {
    if (!(error instanceof ConfigError) || error.code !== "config.watch") throw error;
    const issues = Array.isArray(error.details.issues) ? error.details.issues : [];
    throw manifest.sources.issues(
      issues.map((issue: { path?: unknown; message?: unknown }) => ({
        path: String(issue.path ?? "watch"),
        message: String(issue.message),
      })),
    );
  }
}
