import type { NoteEntry, WatchState } from "./watch-state.js";

/** The heading of the notes block in a context. */
export const NOTES_HEADING = "## Screen notes";

/** `HH:MM:SS` (UTC) of an epoch-milliseconds time. */
function clockTime(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

/** One note as a context line: `- [12:03:04] text`. */
export function noteLine(note: Pick<NoteEntry, "frame" | "text" | "by">): string {
  return `- [${clockTime(note.frame.at)}]${note.by === "commentary" ? " (commentary)" : ""} ${note.text}`;
}

/**
 * The notes block a model sees (user turns and commentary alike): the running summary of older
 * notes, the notes waiting for compaction, then the rolling notes, oldest first. Empty text when
 * there is nothing yet. Pure.
 */
export function renderWatchNotes(state: Pick<WatchState, "summary" | "pending" | "notes">): string {
  const lines: string[] = [];
  if (state.summary) lines.push("Summary of earlier notes:", state.summary.trim(), "");
  const recent = [...state.pending, ...state.notes];
  if (recent.length > 0) {
    lines.push("Recent notes (oldest first):", ...recent.map(noteLine));
  }
  if (lines.length === 0) return "";
  return [
    `${NOTES_HEADING} (what the watched screen showed, noted by a vision model; you do not see the image unless it is attached)`,
    "",
    ...lines,
  ].join("\n");
}
