import { migrateWatchSettings, type WatchMigration } from "./watch-migration.js";
import { parseWatchSettings, type WatchSettings, watchSettingsError } from "./watch-settings.js";

/** An agent's stream watch, as its manifest's `watch:` section sets it. */
export interface AgentWatchSettings {
  readonly settings: WatchSettings;
  /** The legacy keys the section held and where each went (empty when none). */
  readonly migrated: readonly WatchMigration[];
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
  const { settings, report } = migrateWatchSettings(section);
  return { settings: parseWatchSettings(settings), migrated: report };
}
