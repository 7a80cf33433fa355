import { z } from "zod";
import { artifactHash, defineEvent } from "./define-event.js";

const watchStreams = ["continuity"] as const;
const score = z.number().min(0).max(1);
const seq = z.number().int().min(1);
const text = z.string().min(1).max(4_000);
/** A model's name as its provider spells it. */
const model = z.string().min(1).max(256);
/** Token usage of the call that produced the event, as the provider reported it. */
const usage = z
  .strictObject({
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
  })
  .optional();
/** The frame a decision looked at: its artifact, size, capture time and source. */
const frame = z.strictObject({
  hash: artifactHash,
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  /** Capture time, epoch milliseconds of the session's clock. */
  at: z.number().int().nonnegative(),
  source: z.string().min(1).max(256),
  /** Where the latest frame is written on disk, when the frame source writes one. */
  path: z.string().max(4_096).optional(),
});
/** Why a note was taken: a scene cut, a change over the threshold, or an interval that passed. */
const noteTrigger = z.enum(["first", "cut", "change", "interval", "idle"]);
/** Why a commentary was due: the stream started, the interval passed, or a change. */
const commentaryTrigger = z.enum(["start", "interval", "change"]);
/** A gate that held a due commentary back (or the model's own `[SKIP]`). */
const commentaryGate = z.enum(["disabled", "quiet-window", "foreground-busy", "no-frame", "skip"]);

/**
 * Stream watch (`src/frames/`): the note-taker's notes, their compaction into a running summary,
 * the commentary loop's decisions and the watch settings. Every model output is in the log, so
 * the rolling notes and the summary are a fold over these events by `seq`, and replay rebuilds
 * them without calling a model.
 */
export const watchEvents = {
  "watch.started": defineEvent({
    description: "Stream watch began on a frame source (the commentary loop's start time).",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({ source: z.string().min(1).max(256) }),
  }),
  "watch.stopped": defineEvent({
    description: "Stream watch ended on a frame source (its frames ended, or the session closed).",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({ source: z.string().min(1).max(256), reason: z.string().max(1_000) }),
  }),
  "watch.settings-changed": defineEvent({
    description: "The watch settings were set (from the manifest at start) or changed at runtime.",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({
      /** The settings now in force, every one of them (defaults filled in). */
      settings: z.record(z.string(), z.unknown()),
      /** The names of the settings this change set (all of them at start). */
      changed: z.array(z.string().min(1).max(64)).max(64),
      by: z.enum(["manifest", "action", "runtime", "cli", "http"]),
      /** Legacy keys the section held and where each went (`to` absent: dropped). */
      migrated: z
        .array(
          z.strictObject({
            from: z.string().min(1).max(64),
            to: z.string().min(1).max(64).optional(),
            note: z.string().max(500),
          }),
        )
        .max(64)
        .optional(),
    }),
  }),
  "note.added": defineEvent({
    description: "A one-line note of what a frame shows (by the note-taker, or inline commentary).",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({
      text,
      frame,
      score,
      trigger: noteTrigger.optional(),
      by: z.enum(["note-taker", "commentary"]),
      model: model.optional(),
      usage,
    }),
  }),
  "note.skipped": defineEvent({
    description: "The note-taker looked at a frame and wrote the same note as the last one.",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({
      text,
      frame,
      score,
      trigger: noteTrigger,
      reason: z.enum(["duplicate"]),
      model: model.optional(),
      usage,
    }),
  }),
  "notes.compacted": defineEvent({
    description: "Notes evicted from the rolling window were folded into the running summary.",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({
      /** The running summary now: it replaces the one before and covers everything up to `to_seq`. */
      summary: z.string().min(1).max(20_000),
      /** The `note.added` events folded in: every evicted note with `from_seq <= seq <= to_seq`. */
      from_seq: seq,
      to_seq: seq,
      notes: z.number().int().min(1),
      model: model.optional(),
      usage,
    }),
  }),
  "commentary.added": defineEvent({
    description: "The commentary loop spoke about the screen (its text is shown to the user).",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({
      text: z.string().min(1).max(20_000),
      trigger: commentaryTrigger,
      frame: frame.optional(),
      model: model.optional(),
      usage,
    }),
  }),
  "commentary.skipped": defineEvent({
    description: "A due commentary did not speak: a gate held it back, or the model said [SKIP].",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({
      trigger: commentaryTrigger,
      gate: commentaryGate,
      frame: frame.optional(),
      model: model.optional(),
      usage,
    }),
  }),
  "watch.failed": defineEvent({
    description: "A stream-watch model call failed (a note, a compaction or a commentary).",
    criticality: "critical",
    streams: watchStreams,
    schema: z.strictObject({
      call: z.enum(["note", "compaction", "commentary"]),
      error: z.strictObject({
        code: z.string().min(1).max(128),
        message: z.string().max(4_000),
        retryable: z.boolean().optional(),
      }),
      /** The frame the call looked at (a note's or a commentary's); its time starts the wait again. */
      frame: frame.optional(),
      trigger: z.union([noteTrigger, commentaryTrigger]).optional(),
      model: model.optional(),
    }),
  }),
};
