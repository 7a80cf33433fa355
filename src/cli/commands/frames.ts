import { z } from "zod";
import { foldWatchEvents, type NoteFrame, WATCH_EVENT_TYPES } from "../../frames/index.js";
import type { EventStore } from "../../log/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  parseIdentifier,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { oneLine } from "../format.js";
import { redactSecrets } from "../redact.js";
import type { CommandHelp } from "../usage.js";
import { withActiveContinuity } from "./active-continuity.js";

/** Help of `spool frames`. */
export const FRAMES_USAGE: CommandHelp = {
  synopsis: "spool frames [continuity] [--scores N] [--json]",
  text: `Usage: spool frames [continuity] [--scores N] [--json]

Shows what a continuity's stream watch saw: the latest frame (the file the frame source writes,
or its artifact), the recent change scores, the running summary of older notes and the rolling
notes, and how many notes, duplicates, compactions and commentaries there were.
(docs/stream-watch.md).

Options:
  --scores <n>           How many recent scores to show (default 20)
  --json                 One JSON object instead of text
${DB_HELP_LINES}

Examples:
  spool frames
  spool frames screen-watch --scores 50
`,
};

/** One change score as \`spool frames\` shows it. */
interface ScoreRow {
  at: number;
  score: number;
  cut: boolean;
}

/** What the frame side records of its scores (tolerant: the scorer owns the event). */
const recordedScores = z.object({
  scores: z
    .array(
      z.object({
        at: z.number(),
        score: z.number(),
        scene_cut: z.boolean().nullish(),
        path: z.string().nullish(),
      }),
    )
    .nullish(),
  path: z.string().nullish(),
});

/** What `spool frames` reports, also its `--json` object. */
export interface FramesReport {
  continuity: string;
  latest?: NoteFrame & { file?: string };
  scores: ScoreRow[];
  scoresFrom: "scorer" | "notes";
  summary?: string;
  notes: { seq: number; at: number; text: string; score: number; by: string }[];
  counts: ReturnType<typeof foldWatchEvents>["counts"];
}

/** Reads a continuity's frames report from its log: the watch fold and the scorer's events. */
export async function framesReport(
  store: EventStore,
  continuity: string,
  limit: number,
): Promise<FramesReport> {
  const events = [];
  for await (const event of store.read({ continuity, types: WATCH_EVENT_TYPES })) {
    events.push(event);
  }
  const state = foldWatchEvents(events);
  const recorded: ScoreRow[] = [];
  let file: string | undefined;
  for await (const event of store.read({ continuity, types: ["frame.scores-recorded"] })) {
    const parsed = recordedScores.safeParse(event.data);
    if (!parsed.success) continue;
    for (const row of parsed.data.scores ?? []) {
      recorded.push({ at: row.at, score: row.score, cut: row.scene_cut === true });
      if (row.path) file = row.path;
    }
    if (parsed.data.path) file = parsed.data.path;
  }
  const noted = events.flatMap((event) =>
    event.type === "note.added" || event.type === "note.skipped"
      ? [
          {
            at: (event.data as { frame: NoteFrame }).frame.at,
            score: (event.data as { score: number }).score,
            cut: (event.data as { trigger?: string }).trigger === "cut",
          },
        ]
      : [],
  );
  const scores = recorded.length > 0 ? recorded : noted;
  const latest = state.latestFrame;
  const path = file ?? latest?.path;
  return {
    continuity,
    ...(latest ? { latest: { ...latest, ...(path ? { file: path } : {}) } } : {}),
    scores: scores.slice(-limit),
    scoresFrom: recorded.length > 0 ? "scorer" : "notes",
    ...(state.summary ? { summary: state.summary } : {}),
    notes: [...state.pending, ...state.notes].map((note) => ({
      seq: note.seq,
      at: note.frame.at,
      text: note.text,
      score: note.score,
      by: note.by,
    })),
    counts: state.counts,
  };
}

const time = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/**
 * `spool frames [continuity] [--scores N] [--json]`: the latest frame's file (or artifact),
 * recent scores and the notes of a continuity's stream watch. Without a continuity, the one with
 * the newest activity. Never writes to the log.
 */
export async function framesCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "frames";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    scores: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length > 1) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(positionals[1])}`);
  }
  const given =
    positionals[0] !== undefined
      ? parseIdentifier(command, "continuity", positionals[0])
      : undefined;
  const limit = values.scores === undefined ? 20 : Number(values.scores);
  if (!Number.isInteger(limit) || limit < 0 || limit > 10_000) {
    throw new UsageError(command, "--scores must be a whole number from 0 to 10000");
  }
  const report = await withActiveContinuity(ctx, locateStore(ctx, values.db), given, (store, id) =>
    framesReport(store, id, limit),
  );
  if (values.json) {
    ctx.out(JSON.stringify(report));
    return 0;
  }
  for (const line of framesLines(report)) ctx.out(line);
  return 0;
}

/** The text of a frames report, line by line (secrets redacted, one line per note). */
export function framesLines(report: FramesReport): string[] {
  const clean = (text: string) => oneLine(redactSecrets(text));
  const { latest, counts } = report;
  if (!latest && report.notes.length === 0 && report.scores.length === 0) {
    return [
      `No stream watch in ${JSON.stringify(report.continuity)} yet (an agent with a watch: section records one).`,
    ];
  }
  const lines = [`Frames of ${clean(report.continuity)}`];
  if (latest) {
    const where = latest.file ? clean(latest.file) : `artifact ${latest.hash}`;
    lines.push(
      `Latest frame: ${where} · ${latest.width}×${latest.height} · ${time(latest.at)} · ${clean(latest.source)}`,
    );
  }
  if (report.scores.length > 0) {
    const shown = report.scores
      .map((row) => `${time(row.at)} ${row.score.toFixed(3)}${row.cut ? " cut" : ""}`)
      .join(" · ");
    lines.push(
      `Recent scores (${report.scoresFrom === "scorer" ? "every frame" : "noted frames"}): ${shown}`,
    );
  }
  if (report.summary) lines.push("Summary of earlier notes:", `  ${clean(report.summary)}`);
  if (report.notes.length > 0) {
    lines.push("Notes:");
    for (const note of report.notes) {
      const by = note.by === "commentary" ? " (commentary)" : "";
      lines.push(`  [${time(note.at)}]${by} ${clean(note.text)} · score ${note.score.toFixed(3)}`);
    }
  }
  lines.push(
    `${counts.notes} notes · ${counts.duplicates} unchanged · ${counts.compactions} compactions · ${counts.commentaries} commentaries · ${counts.skips} skipped`,
  );
  return lines;
}
