import { migrateWatchSettings, type WatchMigration } from "./watch-migration.js";
import { parseWatchSettings, type WatchSettings, watchSettingsError } from "./watch-settings.js";
import { readWatchSource, type WatchSourceConfig } from "./watch-source.js";

/** An agent's stream watch, as its manifest's `watch:` section sets it. */
export interface AgentWatchSettings {
  readonly settings: WatchSettings;
  /** The legacy keys the section held and where each went (empty when none). */
  readonly migrated: readonly WatchMigration[];
  /** Where the frames come from (`source:`); without it a session starts no watch. */
  readonly source?: WatchSourceConfig;
}

/**
 * Reads an agent manifest's `watch:` section: `true` or a mapping (`{}` takes every default;
 * legacy keys are migrated and reported); `false`, `null` or absent means the agent watches no
 * frames (`undefined`). Throws `ConfigError` (`config.watch`, issues in `details.issues`) for a
 * bad section, each message naming the setting and its range.
 */
export function readWatchSection(section: unknown): AgentWatchSettings | undefined {
  if (section === undefined || section === null || section === false) return undefined;
  if (section === true) return { settings: parseWatchSettings({}), migrated: [] };
  if (typeof section !== "object" || Array.isArray(section)) {
    throw watchSettingsError([
      {
        path: "watch",
        message:
          "must be true, false or a mapping of settings (e.g. watch: { noteIntervalSeconds: 10 })",
      },
    ]);
  }
  const { source: sourceValue, ...rest } = section as Record<string, unknown>;
  const read = sourceValue === undefined ? undefined : readWatchSource(sourceValue);
  if (read && "issues" in read) throw watchSettingsError(read.issues);
  const { settings, report } = migrateWatchSettings(rest);
  return {
    settings: parseWatchSettings(settings),
    migrated: report,
    ...(read ? { source: read.source } : {}),
  };
}
