import { z } from "zod";
import { preview, unknownFields } from "./feed-issues.js";
import { defineInternalSource } from "./internal-source.js";

/** The named formats of `system_clock` (matched without regard to case). */
export const CLOCK_FORMATS = ["ISO8601", "RFC2822", "unix", "unix_ms"] as const;

const TOKEN = /\[([^\]]*)\]|YYYY|MMM|MM|DD|ddd|HH|mm|ss|SSS|Z/g;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** True when `Intl` knows `timeZone` (an IANA name such as `Europe/Berlin`, or `UTC`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

function isClockFormat(format: string): boolean {
  if (CLOCK_FORMATS.some((name) => name.toUpperCase() === format.toUpperCase())) return true;
  return /YYYY|MMM|MM|DD|ddd|HH|mm|ss|SSS|Z/.test(format.replace(/\[[^\]]*\]/g, ""));
}

/** The wall-clock fields of the instant `ms` in `timeZone`, and that zone's offset from UTC. */
function wallClock(ms: number, timeZone: string) {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(ms)) {
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  }
  const wall = new Date(0);
  wall.setUTCFullYear(fields.year ?? 1970, (fields.month ?? 1) - 1, fields.day ?? 1);
  wall.setUTCHours(fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0, 0);
  const whole = Math.floor(ms / 1000) * 1000;
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth(),
    day: wall.getUTCDate(),
    weekday: wall.getUTCDay(),
    hour: wall.getUTCHours(),
    minute: wall.getUTCMinutes(),
    second: wall.getUTCSeconds(),
    millisecond: ms - whole,
    offsetMinutes: Math.round((wall.getTime() - whole) / 60_000),
  };
}

const pad = (value: number, width = 2) => String(value).padStart(width, "0");

function offset(minutes: number, separator: string): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}${separator}${pad(abs % 60)}`;
}

/**
 * Writes the instant `ms` in `timeZone` as `format`: `ISO8601` (`2024-06-15T12:34:56Z`, or with
 * `+02:00` where the zone's offset is not zero; whole seconds), `RFC2822`
 * (`Sat, 15 Jun 2024 12:34:56 +0000`), `unix` (whole seconds), `unix_ms`, or a pattern of the
 * tokens `YYYY MM MMM DD ddd HH mm ss SSS Z` (`Z` is `+02:00`), with `[text]` for literal text
 * and every other character copied. Throws a RangeError for a time zone `Intl` does not know.
 */
export function formatClock(ms: number, format: string, timeZone: string): string {
  const upper = format.toUpperCase();
  if (upper === "UNIX") return String(Math.floor(ms / 1000));
  if (upper === "UNIX_MS") return String(Math.floor(ms));
  const t = wallClock(ms, timeZone);
  if (upper === "ISO8601") {
    const zone = t.offsetMinutes === 0 ? "Z" : offset(t.offsetMinutes, ":");
    return `${pad(t.year, 4)}-${pad(t.month + 1)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}${zone}`;
  }
  if (upper === "RFC2822") {
    return `${DAYS[t.weekday]}, ${pad(t.day)} ${MONTHS[t.month]} ${pad(t.year, 4)} ${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)} ${offset(t.offsetMinutes, "")}`;
  }
  return format.replace(TOKEN, (token, literal: string | undefined) => {
    if (literal !== undefined) return literal;
    switch (token) {
      case "YYYY":
        return pad(t.year, 4);
      case "MMM":
        return MONTHS[t.month]!;
      case "MM":
        return pad(t.month + 1);
      case "DD":
        return pad(t.day);
      case "ddd":
        return DAYS[t.weekday]!;
      case "HH":
        return pad(t.hour);
      case "mm":
        return pad(t.minute);
      case "ss":
        return pad(t.second);
      case "SSS":
        return pad(t.millisecond, 3);
      default:
        return offset(t.offsetMinutes, ":");
    }
  });
}

/**
 * `system_clock`: the engine clock's time. Params: `format` (default `ISO8601`; see
 * `formatClock`) and `timezone` (an IANA name, default `UTC`, not the host's zone, so a value
 * does not depend on where the agent runs).
 */
export const systemClockSource = defineInternalSource({
  name: "system_clock",
  description: "The current time in a chosen format and time zone.",
  parameters: z.strictObject(
    {
      format: z
        .string({ error: "must be text: ISO8601, RFC2822, unix, unix_ms or a pattern" })
        .refine(isClockFormat, {
          error: (issue) =>
            `${preview(issue.input)} is neither a named format (${CLOCK_FORMATS.join(", ")}) nor a pattern with the tokens YYYY MM MMM DD ddd HH mm ss SSS Z`,
        })
        .default("ISO8601"),
      timezone: z
        .string({ error: 'must be an IANA time zone name, e.g. "UTC" or "Europe/Berlin"' })
        .refine(isTimeZone, {
          error: (issue) =>
            `${preview(issue.input)} is not a time zone Intl knows; use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"`,
        })
        .default("UTC"),
    },
    {
      error: (issue) =>
        unknownFields(
          issue.code === "unrecognized_keys" ? issue.keys : [],
          "system_clock takes format, timezone",
        ),
    },
  ),
  read: (params, context) => formatClock(context.now, params.format, params.timezone),
});
