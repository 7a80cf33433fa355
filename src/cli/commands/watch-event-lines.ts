import { type EventData, isEvent, type SpoolEvent } from "../../spec/index.js";
import { oneLine, type Style } from "../format.js";
import { redactSecrets } from "../redact.js";

/** The stream-watch event types `watchEventLine` renders. */
export const WATCH_LINE_TYPES: ReadonlySet<string> = new Set([
  "note.added",
  "note.skipped",
  "notes.compacted",
  "commentary.added",
  "commentary.skipped",
  "watch.started",
  "watch.stopped",
  "watch.settings-changed",
  "watch.failed",
]);

/** `12:03:04` (UTC) of a frame's epoch-milliseconds time. */
function at(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/**
 * The line `spool watch` (and any conversation view) shows for a stream-watch event, or
 * `undefined` for none. Commentary is the agent speaking: a full line. Notes, compactions and
 * settings are quiet (dim) lines; duplicates and gated skips show only with `full` detail. Text
 * is one line, secrets redacted.
 */
export function watchEventLine(event: SpoolEvent, style: Style, full: boolean): string | undefined {
  const clean = (text: string) => oneLine(redactSecrets(text));
  if (isEvent(event, "commentary.added")) {
    return `${style.magenta("◆")} ${style.bold("commentary")}: ${clean(event.data.text)}`;
  }
  if (isEvent(event, "note.added")) {
    const { frame, score, by } = event.data;
    const who = by === "commentary" ? "note (commentary)" : "note";
    return style.dim(
      `◦ ${who} [${at(frame.at)}] ${clean(event.data.text)} · score ${score.toFixed(3)}`,
    );
  }
  if (isEvent(event, "note.skipped")) {
    return full ? style.dim(`◦ note unchanged [${at(event.data.frame.at)}]`) : undefined;
  }
  if (isEvent(event, "notes.compacted")) {
    const { notes, from_seq: from, to_seq: to } = event.data;
    return style.dim(
      `◦ ${notes} note${notes === 1 ? "" : "s"} folded into the summary (seq ${from}–${to})`,
    );
  }
  if (isEvent(event, "commentary.skipped")) {
    if (!full) return undefined;
    const { gate, trigger } = event.data;
    return style.dim(
      `◦ commentary (${trigger}) ${gate === "skip" ? "skipped: nothing to say" : `held back: ${gate}`}`,
    );
  }
  if (isEvent(event, "watch.failed")) {
    const { call, error } = event.data;
    return `${style.yellow("⚠")} ${style.dim(`${call} call failed: ${clean(error.message)} (${error.code})`)}`;
  }
  if (isEvent(event, "watch.started")) return style.dim(`◦ watching ${clean(event.data.source)}`);
  if (isEvent(event, "watch.stopped")) {
    return style.dim(`◦ stopped watching ${clean(event.data.source)}: ${clean(event.data.reason)}`);
  }
  if (isEvent(event, "watch.settings-changed"))
    return full ? settingsLine(event.data, style) : undefined;
  return undefined;
}

function settingsLine(data: EventData<"watch.settings-changed">, style: Style): string {
  const values = data.changed
    .slice(0, 8)
    .map((name) => `${name}=${JSON.stringify(data.settings[name])}`)
    .join(", ");
  const more = data.changed.length > 8 ? `, +${data.changed.length - 8} more` : "";
  const migrated = data.migrated?.length
    ? ` · migrated ${data.migrated.map((entry) => `${entry.from}→${entry.to ?? "dropped"}`).join(", ")}`
    : "";
  return style.dim(`◦ watch settings (${data.by}): ${values}${more}${migrated}`);
}
