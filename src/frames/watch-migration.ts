import { WATCH_RANGES, type WatchRangeName } from "./watch-settings.js";

/** Where one legacy key went: `to` the setting it now sets, or absent when it was dropped. */
export interface WatchMigration {
  from: string;
  to?: string;
  note: string;
}

/** The migrated section and the report of what mapped where. */
export interface WatchMigrationResult {
  /** The section with every legacy key replaced (new keys untouched); give to `parseWatchSettings`. */
  settings: Record<string, unknown>;
  /** One entry per legacy key found, in the order of `LEGACY_WATCH_KEYS`. */
  report: WatchMigration[];
}

/**
 * The legacy keys of the two-mode pipeline, in priority order: when two map to the same setting,
 * the earlier one wins (the direct-mode keys come first: that mode drove commentary).
 */
export const LEGACY_WATCH_KEYS: Readonly<Record<string, string | null>> = Object.freeze({
  brainContextMode: null,
  brainContextEnabled: null,
  directMinIntervalSeconds: "commentaryIntervalSeconds",
  minCommentaryIntervalSeconds: "commentaryIntervalSeconds",
  directMaxEntries: "maxNoteEntries",
  brainContextMaxEntries: "maxNoteEntries",
  directChangeThreshold: "changeThreshold",
  directChangeMinIntervalSeconds: "changeMinIntervalSeconds",
  brainContextMinIntervalSeconds: "noteIntervalSeconds",
  brainContextProvider: "noteProvider",
  brainContextModel: "noteModel",
});

const DROPPED: Readonly<Record<string, string>> = {
  brainContextMode: "removed: there is one pipeline now (notes and commentary both run)",
  brainContextEnabled: "removed: notes always run while a frame source is watched",
};

/**
 * Rewrites a watch section that may hold legacy keys into the unified one, and reports each legacy
 * key: the setting it now sets, that it was ignored (the unified key, or an earlier legacy key,
 * already set it), that it was clamped into the new range, or that it was dropped. Keys that are
 * not legacy pass through untouched (validation reports any unknown one). Pure; never throws.
 */
export function migrateWatchSettings(section: unknown): WatchMigrationResult {
  if (section === null || typeof section !== "object" || Array.isArray(section)) {
    return { settings: section === undefined || section === null ? {} : { section }, report: [] };
  }
  const input = section as Record<string, unknown>;
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!Object.hasOwn(LEGACY_WATCH_KEYS, key)) settings[key] = value;
  }
  const report: WatchMigration[] = [];
  const setByLegacy = new Map<string, string>();
  for (const [from, to] of Object.entries(LEGACY_WATCH_KEYS)) {
    if (!Object.hasOwn(input, from)) continue;
    const value = input[from];
    if (to === null) {
      report.push({ from, note: DROPPED[from]! });
      continue;
    }
    if (Object.hasOwn(input, to)) {
      report.push({ from, to, note: `ignored: ${to} is set in the section itself` });
      continue;
    }
    const earlier = setByLegacy.get(to);
    if (earlier !== undefined) {
      report.push({ from, to, note: `ignored: ${earlier} already set ${to}` });
      continue;
    }
    const { value: mapped, clamped } = clamp(to, value);
    settings[to] = mapped;
    setByLegacy.set(to, from);
    report.push({
      from,
      to,
      note: clamped
        ? `moved to ${to}, clamped from ${String(value)} to ${String(mapped)} (range ${rangeText(to)})`
        : `moved to ${to}`,
    });
  }
  return { settings, report };
}

function clamp(to: string, value: unknown): { value: unknown; clamped: boolean } {
  if (!Object.hasOwn(WATCH_RANGES, to) || typeof value !== "number" || !Number.isFinite(value)) {
    return { value, clamped: false };
  }
  const range = WATCH_RANGES[to as WatchRangeName];
  const next = Math.min(range.max, Math.max(range.min, value));
  return { value: next, clamped: next !== value };
}

function rangeText(to: string): string {
  const range = WATCH_RANGES[to as WatchRangeName];
  return `${range.min}-${range.max}`;
}
