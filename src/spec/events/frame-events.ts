import { z } from "zod";
import { actionError } from "./action-events.js";
import { defineEvent, identifier } from "./define-event.js";

const frameStreams = ["source"] as const;
const count = z.number().int().nonnegative();
/** Epoch milliseconds from the session's clock (a frame's `at`). */
const epochMs = z.number().int().nonnegative();
/** A change score, 0 (same) to 1 (inverted), rounded to 4 decimals. */
const score = z.number().min(0).max(1);
/** The most scores one `frame.scores-recorded` event carries. */
export const MAX_RECORDED_SCORES = 2_000;

/**
 * Frame sources and their change scores (`src/frames/`). Every event is on the frame source's own
 * stream (`{ kind: "source", id }`). Raw frames are never logged: the frames that matter are
 * stored as artifacts by whoever keeps them, and the scores are logged compactly, many per event.
 */
export const frameEvents = {
  "frame.source-started": defineEvent({
    description: "A frame source began producing frames.",
    criticality: "critical",
    streams: frameStreams,
    schema: z.strictObject({
      source: identifier,
      kind: z.enum(["screencast", "video", "directory", "push"]),
      /** What it reads (a path, a URL with any password removed, a tab), for people. */
      target: z.string().max(4_096),
      /** Frames per second asked of it, where the source has a rate. */
      fps: z.number().positive().optional(),
    }),
  }),
  "frame.source-stopped": defineEvent({
    description: "A frame source ended: its input ended or it was stopped.",
    criticality: "critical",
    streams: frameStreams,
    schema: z.strictObject({
      source: identifier,
      reason: z.enum(["ended", "aborted"]),
      /** Frames it produced in all. */
      frames: count,
    }),
  }),
  "frame.source-failed": defineEvent({
    description: "A frame source hit a problem: `final` when it stopped for good, else it goes on.",
    criticality: "critical",
    streams: frameStreams,
    schema: z.strictObject({
      source: identifier,
      error: actionError,
      final: z.boolean(),
      /** ffmpeg's exit code (null: killed by a signal). */
      exit_code: z.number().int().nullable().optional(),
      /** The last lines ffmpeg wrote to stderr, passwords removed. */
      stderr_tail: z.string().max(4_096).optional(),
    }),
  }),
  "frame.rejected": defineEvent({
    description:
      "Frames were refused before scoring (too big, empty, undecodable); adjacent ones coalesce.",
    criticality: "droppable",
    streams: frameStreams,
    schema: z.strictObject({
      source: identifier,
      reason: z.enum(["too-big", "empty", "undecodable", "unsupported"]),
      /** The size of the (last) refused frame. */
      bytes: count,
      /** When the (last) refused frame was captured. */
      at: epochMs,
      /** How many frames this event stands for (more than 1 once coalesced). */
      count: z.number().int().min(1),
      detail: z.string().max(1_000).optional(),
    }),
    coalesce(earlier, later) {
      if (earlier.reason !== later.reason || earlier.source !== later.source) return undefined;
      return { ...later, count: earlier.count + later.count };
    },
  }),
  "frame.scores-recorded": defineEvent({
    description:
      "The change scores of the frames of one interval, compactly; adjacent ones coalesce.",
    criticality: "droppable",
    streams: frameStreams,
    schema: z
      .strictObject({
        source: identifier,
        /** The capture time of each scored frame, as offsets in ms from `from`. */
        from: epochMs,
        offsets: z.array(count).max(MAX_RECORDED_SCORES),
        /** Each frame's score against the last noted frame (same order as `offsets`). */
        scores: z.array(score).max(MAX_RECORDED_SCORES),
        /** Indexes (into `scores`) of the scene cuts. */
        cuts: z.array(count).max(MAX_RECORDED_SCORES),
        /** Indexes of forced refreshes (the maximum skip interval passed). */
        forced: z.array(count).max(MAX_RECORDED_SCORES),
        /** The score EMA after the last frame of the interval. */
        ema: score,
        /** Frames equal to the last noted one (scored 0 without decoding). */
        duplicates: count,
        /** Frames dropped before decoding by `maxFramesPerMinute`. */
        rate_dropped: count,
        /** Scored frames dropped because the consumer fell behind (the latest frame wins). */
        queue_dropped: count,
        /** Frames noted by the consumer in the interval. */
        noted: count,
      })
      .refine((data) => data.offsets.length === data.scores.length, {
        message: "offsets and scores must have one entry per frame each",
        path: ["offsets"],
      }),
    coalesce(earlier, later) {
      if (earlier.source !== later.source) return undefined;
      if (earlier.scores.length + later.scores.length > MAX_RECORDED_SCORES) return undefined;
      const shift = later.from - earlier.from;
      if (shift < 0) return undefined;
      const base = earlier.scores.length;
      return {
        source: earlier.source,
        from: earlier.from,
        offsets: [...earlier.offsets, ...later.offsets.map((offset) => offset + shift)],
        scores: [...earlier.scores, ...later.scores],
        cuts: [...earlier.cuts, ...later.cuts.map((index) => index + base)],
        forced: [...earlier.forced, ...later.forced.map((index) => index + base)],
        ema: later.ema,
        duplicates: earlier.duplicates + later.duplicates,
        rate_dropped: earlier.rate_dropped + later.rate_dropped,
        queue_dropped: earlier.queue_dropped + later.queue_dropped,
        noted: earlier.noted + later.noted,
      };
    },
  }),
};
