import { z } from "zod";
import { defineTool } from "../actions/index.js";
import { ToolError } from "./tool-error.js";

/** What `clock.now` is built from. */
export interface ClockNowOptions {
  /** The clock (default `() => new Date()`); injected by tests and replays. */
  clock?: () => Date;
  /** The zone used when the call names none (default the host's zone). */
  timezone?: string;
}

/** `clock.now`'s result. */
export interface ClockNowResult {
  /** Local time in `timezone` with its UTC offset, e.g. `2025-03-01T09:30:00.000+01:00`. */
  iso: string;
  /** The same instant in UTC, e.g. `2025-03-01T08:30:00.000Z`. */
  utc: string;
  epochMs: number;
  timezone: string;
  /** The local day of the week in English, e.g. `Saturday`. */
  weekday: string;
}

const parameters = z.strictObject({
  timezone: z
    .string()
    .min(1)
    .optional()
    .describe("IANA time zone, e.g. `Europe/Paris` or `UTC` (default: the runtime's zone)."),
});

function pad(value: number, width = 2): string {
  return String(Math.abs(value)).padStart(width, "0");
}

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      weekday: "long",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
  } catch (error) {
    throw new ToolError("tool.bad-timezone", `\`${timeZone}\` is not a known time zone`, {
      cause: error,
      hint: "Use an IANA name such as `UTC`, `Europe/Paris` or `America/New_York`",
    });
  }
}

/** `date` in `timeZone` as `ClockNowResult`. Throws `tool.bad-timezone` for an unknown zone. */
export function zonedTime(date: Date, timeZone: string): ClockNowResult {
  const formatter = formatterFor(timeZone);
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(date)) parts[part.type] = part.value;
  const field = (name: string) => Number(parts[name]);
  const epochMs = date.getTime();
  const milliseconds = date.getUTCMilliseconds();
  const wall = Date.UTC(
    field("year"),
    field("month") - 1,
    field("day"),
    field("hour"),
    field("minute"),
    field("second"),
    milliseconds,
  );
  const offset = Math.round((wall - epochMs) / 60_000);
  const sign = offset < 0 ? "-" : "+";
  const iso =
    `${pad(field("year"), 4)}-${pad(field("month"))}-${pad(field("day"))}` +
    `T${pad(field("hour"))}:${pad(field("minute"))}:${pad(field("second"))}.${pad(milliseconds, 3)}` +
    `${sign}${pad(Math.trunc(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return {
    iso,
    utc: date.toISOString(),
    epochMs,
    timezone: timeZone,
    weekday: parts.weekday ?? "",
  };
}

/**
 * `clock.now`: the current time from the injected clock, in a named or the default time zone.
 * Idempotent, no side effects (a replay reads the recorded result, not the clock).
 */
export function clockNowTool({ clock = () => new Date(), timezone }: ClockNowOptions = {}) {
  const fallbackZone = timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  return defineTool({
    name: "clock.now",
    description:
      "Returns the current date and time: ISO 8601 with UTC offset, UTC, epoch milliseconds and weekday, in a given IANA time zone.",
    parameters,
    idempotent: true,
    sideEffects: false,
    execute(input): ClockNowResult {
      return zonedTime(clock(), input.timezone ?? fallbackZone);
    },
  });
}
