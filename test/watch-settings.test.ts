/**
 * The unified watch settings: defaults and ranges from seed 002's table, errors that name the
 * setting and its range, an unknown key pointed at the nearest known one, and the legacy keys of
 * the two-mode pipeline migrated with a report of what went where.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_WATCH_SETTINGS,
  migrateWatchSettings,
  parseWatchSettings,
  WATCH_RANGES,
} from "../src/frames/index.js";
import { ConfigError } from "../src/spec/index.js";

function issuesOf(input: unknown): { path: string; message: string }[] {
  try {
    parseWatchSettings(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("config.watch");
    return (error as ConfigError).details.issues as { path: string; message: string }[];
  }
  throw new Error("expected the settings to be refused");
}

describe("watch settings", () => {
  it("fills in the seed's defaults", () => {
    expect(parseWatchSettings(undefined)).toEqual(DEFAULT_WATCH_SETTINGS);
    expect(DEFAULT_WATCH_SETTINGS).toMatchObject({
      noteIntervalSeconds: 10,
      noteIdleIntervalSeconds: 30,
      staticFloor: 0.005,
      maxNoteEntries: 12,
      changeThreshold: 0.01,
      changeMinIntervalSeconds: 2,
      commentaryIntervalSeconds: 15,
      autonomousCommentaryEnabled: true,
      enabled: true,
    });
    expect(parseWatchSettings({ noteModel: "claude-haiku-4-5", staticFloor: 0.01 })).toMatchObject({
      noteModel: "claude-haiku-4-5",
      staticFloor: 0.01,
      noteIntervalSeconds: 10,
    });
  });

  it("refuses each value out of its range with the setting and the range in the message", () => {
    for (const [name, range] of Object.entries(WATCH_RANGES)) {
      for (const bad of [range.min - 0.0001, range.max + 1, "ten"]) {
        const [issue] = issuesOf({ [name]: bad });
        expect(issue!.path).toBe(`watch.${name}`);
        expect(issue!.message).toContain(name);
        expect(issue!.message).toContain(`from ${range.min} to ${range.max}`);
      }
    }
    expect(issuesOf({ maxNoteEntries: 2.5 })[0]!.message).toContain("whole number");
    expect(issuesOf({ autonomousCommentaryEnabled: "yes" })[0]!.message).toContain("true or false");
  });

  it("names the nearest setting for a misspelt key and lists all problems at once", () => {
    const issues = issuesOf({ note_interval_seconds: 5, changeThreshold: 3, bogus: 1 });
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      "watch.bogus",
      "watch.changeThreshold",
      "watch.note_interval_seconds",
    ]);
    expect(issues.find((i) => i.path.endsWith("seconds"))!.message).toContain(
      "did you mean noteIntervalSeconds",
    );
    expect(issues.find((i) => i.path.endsWith("bogus"))!.message).toContain("known:");
  });

  it("changes over the settings in force, leaving the others", () => {
    const base = parseWatchSettings({ noteIntervalSeconds: 20 });
    expect(parseWatchSettings({ staticFloor: 0.002 }, base)).toMatchObject({
      noteIntervalSeconds: 20,
      staticFloor: 0.002,
    });
  });
});

describe("legacy watch settings", () => {
  it("maps each legacy key to its unified setting and reports where it went", () => {
    const { settings, report } = migrateWatchSettings({
      brainContextMode: "direct",
      brainContextEnabled: true,
      directMinIntervalSeconds: 20,
      directMaxEntries: 8,
      brainContextMaxEntries: 10,
      directChangeThreshold: 0.15,
      directChangeMinIntervalSeconds: 3,
      brainContextMinIntervalSeconds: 12,
      minCommentaryIntervalSeconds: 30,
      noteModel: "haiku",
    });
    expect(settings).toEqual({
      noteModel: "haiku",
      commentaryIntervalSeconds: 20,
      maxNoteEntries: 8,
      changeThreshold: 0.15,
      changeMinIntervalSeconds: 3,
      noteIntervalSeconds: 12,
    });
    const where = Object.fromEntries(report.map((entry) => [entry.from, entry]));
    expect(where.brainContextMode).toEqual({
      from: "brainContextMode",
      note: expect.stringContaining("one pipeline"),
    });
    expect(where.brainContextEnabled!.to).toBeUndefined();
    expect(where.directMaxEntries).toEqual({
      from: "directMaxEntries",
      to: "maxNoteEntries",
      note: "moved to maxNoteEntries",
    });
    expect(where.brainContextMaxEntries!.note).toBe(
      "ignored: directMaxEntries already set maxNoteEntries",
    );
    expect(where.minCommentaryIntervalSeconds!.note).toContain("ignored");
    expect(parseWatchSettings(settings)).toMatchObject({ changeThreshold: 0.15 });
  });

  it("lets a unified key win over its legacy one and clamps a legacy value into the new range", () => {
    const { settings, report } = migrateWatchSettings({
      directChangeThreshold: 0.001,
      directMaxEntries: 40,
      maxNoteEntries: 6,
    });
    expect(settings).toEqual({ changeThreshold: 0.005, maxNoteEntries: 6 });
    expect(report).toEqual([
      {
        from: "directMaxEntries",
        to: "maxNoteEntries",
        note: "ignored: maxNoteEntries is set in the section itself",
      },
      {
        from: "directChangeThreshold",
        to: "changeThreshold",
        note: "moved to changeThreshold, clamped from 0.001 to 0.005 (range 0.005-1)",
      },
    ]);
  });
});
