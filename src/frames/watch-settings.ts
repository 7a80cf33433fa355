import { z } from "zod";
import { ConfigError } from "../spec/index.js";

/** One numeric setting: its default and inclusive range. */
interface Range {
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

/**
 * The numeric watch settings with their defaults and inclusive ranges (seed 002's unified table,
 * plus the commentary gates it names). Seconds unless the name says otherwise.
 */
export const WATCH_RANGES = {
  /** Normal interval between note-taker ticks, for a screen with some motion. */
  noteIntervalSeconds: { default: 10, min: 3, max: 120 },
  /** Interval when the screen is static or shows ambient motion only. */
  noteIdleIntervalSeconds: { default: 30, min: 10, max: 120 },
  /** Change scores below this are treated as static. */
  staticFloor: { default: 0.005, min: 0.001, max: 0.05 },
  /** Rolling notes kept in context; older ones are compacted into the running summary. */
  maxNoteEntries: { default: 12, min: 1, max: 24 },
  /** A change score at or above this fires a note now (cooldown permitting). */
  changeThreshold: { default: 0.01, min: 0.005, max: 1 },
  /** Cooldown between change-triggered (and scene-cut) notes. */
  changeMinIntervalSeconds: { default: 2, min: 1, max: 30 },
  /** Minimum seconds between proactive commentary turns (the steady interval). */
  commentaryIntervalSeconds: { default: 15, min: 5, max: 120 },
  /** Cooldown of a change-triggered early commentary, after the last commentary. */
  commentaryChangeMinIntervalSeconds: { default: 5, min: 1, max: 120 },
  /** Commentary waits this long after the last user input (the quiet window). */
  quietWindowSeconds: { default: 3, min: 0, max: 300 },
} as const satisfies Record<string, Range>;

/** The name of a numeric watch setting. */
export type WatchRangeName = keyof typeof WATCH_RANGES;

/** The stream-watch settings in force (every one present). */
export interface WatchSettings {
  /** Stream watch runs at all (notes and commentary) while a frame source is attached. */
  readonly enabled: boolean;
  /** The provider of note-taker calls (a provider name); absent: the agent's own. */
  readonly noteProvider?: string;
  /** The model of note-taker calls (cheap and fast); absent: the agent's own. */
  readonly noteModel?: string;
  /** The provider of commentary calls; absent: the agent's own. */
  readonly commentaryProvider?: string;
  /** The model of commentary calls; absent: the agent's own. */
  readonly commentaryModel?: string;
  /** The master switch of proactive commentary. */
  readonly autonomousCommentaryEnabled: boolean;
  readonly noteIntervalSeconds: number;
  readonly noteIdleIntervalSeconds: number;
  readonly staticFloor: number;
  readonly maxNoteEntries: number;
  readonly changeThreshold: number;
  readonly changeMinIntervalSeconds: number;
  readonly commentaryIntervalSeconds: number;
  readonly commentaryChangeMinIntervalSeconds: number;
  readonly quietWindowSeconds: number;
}

const INTEGER_SETTINGS: ReadonlySet<WatchRangeName> = new Set(["maxNoteEntries"]);

function rangeSchema(name: WatchRangeName): z.ZodType<number | undefined> {
  const range: Range = WATCH_RANGES[name];
  const message = `${name} must be a number from ${range.min} to ${range.max} (default ${range.default})`;
  let schema = z.number({ error: message }).min(range.min, message).max(range.max, message);
  if (INTEGER_SETTINGS.has(name)) schema = schema.int(`${name} must be a whole number`);
  return schema.optional();
}

const name = (setting: string) =>
  z
    .string({ error: `${setting} must be a provider or model name` })
    .min(1, `${setting} must not be empty (leave it out to use the agent's own)`)
    .max(256)
    .optional();

const flag = (setting: string, fallback: boolean) =>
  z.boolean({ error: `${setting} must be true or false (default ${fallback})` }).optional();

const settingsSchema = z.strictObject({
  enabled: flag("enabled", true),
  noteProvider: name("noteProvider"),
  noteModel: name("noteModel"),
  commentaryProvider: name("commentaryProvider"),
  commentaryModel: name("commentaryModel"),
  autonomousCommentaryEnabled: flag("autonomousCommentaryEnabled", true),
  ...(Object.fromEntries(
    Object.keys(WATCH_RANGES).map((key) => [key, rangeSchema(key as WatchRangeName)]),
  ) as Record<WatchRangeName, z.ZodType<number | undefined>>),
});

/** Every setting's name, in the order of the table. */
export const WATCH_SETTING_NAMES: readonly string[] = Object.keys(settingsSchema.shape);

/** The settings with every default. */
export const DEFAULT_WATCH_SETTINGS: WatchSettings = Object.freeze({
  enabled: true,
  autonomousCommentaryEnabled: true,
  ...(Object.fromEntries(
    Object.entries(WATCH_RANGES).map(([key, range]) => [key, range.default]),
  ) as Record<WatchRangeName, number>),
});

/** One problem with a watch section: the setting's path and what to do about it. */
export interface WatchSettingIssue {
  path: string;
  message: string;
}

/**
 * Validates a watch settings object (keys as in the table, camelCase; legacy keys must go
 * through `migrateWatchSettings` first) over `base` (the defaults, or the settings in force for a
 * runtime change). Throws `ConfigError` (`config.watch`) whose `details.issues` lists every
 * problem; each message names the setting and its range, an unknown key the nearest known one.
 */
export function parseWatchSettings(
  input: unknown,
  base: WatchSettings = DEFAULT_WATCH_SETTINGS,
  path = "watch",
): WatchSettings {
  const parsed = settingsSchema.safeParse(input ?? {});
  if (!parsed.success) {
    throw watchSettingsError(
      parsed.error.issues.flatMap((issue) => {
        if (issue.code === "unrecognized_keys") {
          return issue.keys.map((key) => ({
            path: `${path}.${key}`,
            message: unknownKeyMessage(key),
          }));
        }
        return [{ path: [path, ...issue.path.map(String)].join("."), message: issue.message }];
      }),
    );
  }
  const given = Object.fromEntries(
    Object.entries(parsed.data).filter(([, value]) => value !== undefined),
  );
  return { ...base, ...given } as WatchSettings;
}

/** The settings `next` sets to a value other than `previous`'s, by name. */
export function changedWatchSettings(previous: WatchSettings, next: WatchSettings): string[] {
  return WATCH_SETTING_NAMES.filter(
    (key) =>
      (previous as unknown as Record<string, unknown>)[key] !==
      (next as unknown as Record<string, unknown>)[key],
  );
}

/** The `ConfigError` for watch settings issues, with the issues in `details.issues`. */
export function watchSettingsError(issues: readonly WatchSettingIssue[]): ConfigError {
  return new ConfigError(
    "config.watch",
    `invalid watch settings: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
    {
      hint: "Fix the named settings in the agent's watch: section (docs/stream-watch.md lists each with its range)",
      details: { issues: issues.map((issue) => ({ ...issue })) },
    },
  );
}

function unknownKeyMessage(key: string): string {
  const folded = key.replaceAll(/[_-]/g, "").toLowerCase();
  const near = WATCH_SETTING_NAMES.find((known) => known.toLowerCase() === folded);
  return near
    ? `is not a watch setting; did you mean ${near}?`
    : `is not a watch setting (known: ${WATCH_SETTING_NAMES.join(", ")})`;
}
