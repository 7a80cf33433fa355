import { definedOnly } from "./defined-only.js";
import { FrameError } from "./frame-error.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./frame-source.js";
import type { IncomingFrame } from "./frame-types.js";

/** The limits every frame passes before it is decoded. */
export interface FrameLimits {
  /**
   * Frames admitted per minute at most (a token bucket refilled by frame time, holding
   * `burst` frames): the rest are dropped before decoding and counted. Default 120 (2 per second).
   */
  maxFramesPerMinute: number;
  /** Frames the bucket holds (how far a burst may run ahead). Default 2. */
  burst: number;
  /** Larger frames are refused (`frame.rejected` `too-big`), never decoded. Default 8 MiB. */
  maxFrameBytes: number;
  /** An admitted frame is marked `keyframe` when the last keyframe is this old (ms). Default 10 s. */
  keyframeIntervalMs: number;
}

/** The default limits (see `FrameLimits`). */
export const DEFAULT_FRAME_LIMITS: FrameLimits = {
  maxFramesPerMinute: 120,
  burst: 2,
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  keyframeIntervalMs: 10_000,
};

/** What the limiter decided for one frame. */
export type Admission =
  | { admit: true; frame: IncomingFrame }
  | { admit: false; reason: "rate" }
  | { admit: false; reason: "too-big" | "empty"; bytes: number };

/**
 * The frame limits as a pure state machine over frame times (never the wall clock), so a
 * recorded hour replays in a second. `admit` refuses empty and oversized frames, drops frames
 * beyond the rate, and marks the first admitted frame and then one at least every
 * `keyframeIntervalMs` as a keyframe (a frame its source marked stays one).
 */
export class FrameLimiter {
  readonly limits: FrameLimits;
  #tokens: number;
  #refilledAt: number | undefined;
  #keyframeAt: number | undefined;

  constructor(limits: Partial<FrameLimits> = {}) {
    this.limits = checkFrameLimits({ ...DEFAULT_FRAME_LIMITS, ...definedOnly(limits) });
    this.#tokens = this.limits.burst;
  }

  /** Decides one frame (in capture order). */
  admit(frame: IncomingFrame): Admission {
    const bytes = frame.data.length;
    if (bytes === 0) return { admit: false, reason: "empty", bytes };
    if (bytes > this.limits.maxFrameBytes) return { admit: false, reason: "too-big", bytes };
    this.#refill(frame.at);
    if (this.#tokens < 1) return { admit: false, reason: "rate" };
    this.#tokens -= 1;
    const due =
      frame.keyframe === true ||
      this.#keyframeAt === undefined ||
      frame.at - this.#keyframeAt >= this.limits.keyframeIntervalMs;
    if (!due)
      return {
        admit: true,
        frame: frame.keyframe === false ? frame : { ...frame, keyframe: false },
      };
    this.#keyframeAt = frame.at;
    return { admit: true, frame: frame.keyframe ? frame : { ...frame, keyframe: true } };
  }

  #refill(at: number): void {
    if (this.#refilledAt !== undefined && at > this.#refilledAt) {
      const perMs = this.limits.maxFramesPerMinute / 60_000;
      this.#tokens = Math.min(this.limits.burst, this.#tokens + (at - this.#refilledAt) * perMs);
    }
    if (this.#refilledAt === undefined || at > this.#refilledAt) this.#refilledAt = at;
  }
}

/** Checks limits given by a caller; throws `frame.bad-option` naming the field. */
export function checkFrameLimits(limits: FrameLimits): FrameLimits {
  const positive: (keyof FrameLimits)[] = [
    "maxFramesPerMinute",
    "burst",
    "maxFrameBytes",
    "keyframeIntervalMs",
  ];
  for (const field of positive) {
    const value = limits[field];
    if (!(typeof value === "number" && Number.isFinite(value) && value > 0)) {
      throw new FrameError(
        "frame.bad-option",
        `${field} must be a positive number, not ${String(value)}`,
        {
          hint: `Set ${field} to a positive number, or leave it out for the default ${DEFAULT_FRAME_LIMITS[field]}`,
          details: { field },
        },
      );
    }
  }
  if (limits.burst < 1) {
    throw new FrameError("frame.bad-option", "burst must be at least 1", {
      hint: "Set burst to 1 or more (frames the rate limit lets through at once)",
      details: { field: "burst" },
    });
  }
  return limits;
}
