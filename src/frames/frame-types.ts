/**
 * The shapes that flow through the frames module: a frame as it arrives from a source, the same
 * frame once stored as a content-addressed artifact, and its change score against the last noted
 * frame. Frame sources produce {@link IncomingFrame}s; the scorer turns each into a
 * {@link ScoredFrame}; the note-taker and commentary loops consume scored frames.
 */

/** Image encodings a frame may arrive in. */
export type FrameMime = "image/jpeg" | "image/png" | "image/webp";

/** A frame as a source yields it, before it is stored or scored. */
export interface IncomingFrame {
  /** The encoded image. */
  readonly data: Buffer;
  readonly mime: FrameMime;
  /** When the frame was captured, in epoch milliseconds from the session's clock. */
  readonly at: number;
  /** The frame source's id (as configured), e.g. `screen`, `tab:t1`, `video`. */
  readonly source: string;
  /** Whether the source marked this frame as a keyframe (a forced full refresh). */
  readonly keyframe?: boolean;
}

/** A stored frame: the artifact that holds its bytes and what is known about it. */
export interface FrameRef {
  /** The sha256 of the encoded bytes: the artifact's hash (exact duplicates share it). */
  readonly hash: string;
  readonly mime: FrameMime;
  readonly bytes: number;
  readonly width: number;
  readonly height: number;
  readonly at: number;
  readonly source: string;
}

/** How much a frame differs from the last frame that was noted. */
export interface ChangeScore {
  /** Mean absolute difference of greyscale thumbnails, 0 (same) to 1 (inverted). */
  readonly score: number;
  /** The exponential moving average of scores, before this frame's score is folded in. */
  readonly ema: number;
  /** The score jumped far above the running average: a scene cut. */
  readonly sceneCut: boolean;
  /** The bytes equal the last noted frame's: scored 0 without decoding. */
  readonly duplicate: boolean;
  /** The maximum skip interval passed since the last noted frame: treat as changed. */
  readonly forced: boolean;
  /**
   * Difference from the previous frame (0–1), what the scene-cut rule looks at; 0 for the first
   * frame and for a frame whose bytes equal the previous one's.
   */
  readonly motion?: number;
}

/** A stored frame with its change score. */
export interface ScoredFrame {
  readonly frame: FrameRef;
  readonly change: ChangeScore;
  /**
   * Scored frames dropped, because the consumer fell behind, between the previous frame it
   * received and this one (absent when none were): the latest frame wins.
   */
  readonly skipped?: number;
}
