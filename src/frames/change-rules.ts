import { FrameError } from "./frame-error.js";

/** How change scores are judged. Every field has a default (`DEFAULT_CHANGE_RULES`). */
export interface ChangeRules {
  /** Weight of the newest value in each EMA: `ema' = ema + alpha × (value − ema)`. */
  alpha: number;
  /**
   * A scene cut needs both the score (against the last noted frame) and the motion (against the
   * previous frame) at or above this absolute floor.
   */
  cutFloor: number;
  /** …and the motion at least this many times the EMA of motion before it. */
  cutRatio: number;
  /** A frame this long (ms) after the last noted frame is `forced`. */
  maxSkipMs: number;
}

/**
 * The defaults: `alpha` 0.2 (about the last five frames), a cut at a change of at least 0.12 that
 * is at least 4× the usual frame-to-frame motion, and a forced refresh 60 s after the last note.
 */
export const DEFAULT_CHANGE_RULES: ChangeRules = {
  alpha: 0.2,
  cutFloor: 0.12,
  cutRatio: 4,
  maxSkipMs: 60_000,
};

/** What the rules remember between frames. */
export interface ChangeState {
  /** EMA of scores (against the last noted frame); undefined before the first frame. */
  scoreEma: number | undefined;
  /** EMA of motion (frame-to-frame difference); undefined before the first motion. */
  motionEma: number | undefined;
  /** When the last noted frame was captured (undefined: nothing noted yet). */
  notedAt: number | undefined;
}

/** The state before any frame. */
export function initialChangeState(): ChangeState {
  return { scoreEma: undefined, motionEma: undefined, notedAt: undefined };
}

/** One frame's measurements, as the scorer took them. */
export interface ChangeInput {
  /** Difference from the last noted frame, 0–1 (1 when nothing was noted yet). */
  score: number;
  /** Difference from the previous frame, 0–1; undefined for the first frame. */
  motion: number | undefined;
  at: number;
  /** The bytes equal the last noted frame's. */
  duplicate: boolean;
}

/** The rules' verdict on one frame, and the state after it. */
export interface ChangeVerdict {
  ema: number;
  motionEma: number;
  sceneCut: boolean;
  forced: boolean;
  state: ChangeState;
}

/**
 * The pure decision for one frame: folds the score and the motion into their EMAs and decides
 * the scene cut and the forced refresh. `ema` and `motionEma` in the verdict are the values
 * before this frame was folded in.
 *
 * Rules: a scene cut is `motion ≥ cutFloor ∧ score ≥ cutFloor ∧ motion ≥ cutRatio × motionEma`.
 * The motion half makes it a jump between this frame and the one before (a fade or a slow drift
 * never jumps, however far it has drifted; frames after an unnoted cut do not jump again); the
 * score half makes it new against what was noted. A cut's motion is folded into the motion EMA
 * like any other, so the violent first frames of a new scene are not taken for more cuts. `forced` is true while nothing
 * was noted yet, and when the last noted frame is `maxSkipMs` or more older than this one; never
 * for an exact duplicate of the noted frame (there is nothing new to look at).
 */
export function decideChange(
  state: ChangeState,
  input: ChangeInput,
  rules: ChangeRules,
): ChangeVerdict {
  const ema = state.scoreEma ?? 0;
  const motionEma = state.motionEma ?? 0;
  const motion = input.motion;
  const sceneCut =
    motion !== undefined &&
    motion >= rules.cutFloor &&
    input.score >= rules.cutFloor &&
    motion >= rules.cutRatio * motionEma;
  const forced =
    !input.duplicate &&
    (state.notedAt === undefined || input.at - state.notedAt >= rules.maxSkipMs);
  const next: ChangeState = {
    scoreEma: fold(state.scoreEma, input.score, rules.alpha),
    motionEma: motion === undefined ? state.motionEma : fold(state.motionEma, motion, rules.alpha),
    notedAt: state.notedAt,
  };
  return { ema, motionEma, sceneCut, forced, state: next };
}

/** The state after the consumer noted a frame captured at `at`. */
export function notedChange(state: ChangeState, at: number): ChangeState {
  return { ...state, notedAt: Math.max(at, state.notedAt ?? at) };
}

function fold(ema: number | undefined, value: number, alpha: number): number {
  return ema === undefined ? value : ema + alpha * (value - ema);
}

/**
 * The mean absolute difference of two greyscale thumbnails of equal size, 0 (same) to 1
 * (inverted). Throws when their sizes differ (thumbnails of different scorer settings).
 */
export function meanAbsoluteDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length || a.length === 0) {
    throw new FrameError(
      "frame.bad-option",
      `cannot compare thumbnails of ${a.length} and ${b.length} pixels`,
      { hint: "Compare thumbnails made with the same width and height" },
    );
  }
  let sum = 0;
  for (let index = 0; index < a.length; index++) {
    const difference = a[index]! - b[index]!;
    sum += difference < 0 ? -difference : difference;
  }
  return sum / (a.length * 255);
}

/** Checks rules given by a caller; throws `frame.bad-option` naming the field. */
export function checkChangeRules(rules: ChangeRules): ChangeRules {
  const bad = (field: string, accepted: string) =>
    new FrameError("frame.bad-option", `${field} must be ${accepted}`, {
      hint: `Set ${field} to ${accepted}, or leave it out for the default ${String(DEFAULT_CHANGE_RULES[field as keyof ChangeRules])}`,
      details: { field },
    });
  if (!(rules.alpha > 0 && rules.alpha <= 1)) throw bad("alpha", "a number in (0, 1]");
  if (!(rules.cutFloor > 0 && rules.cutFloor <= 1)) throw bad("cutFloor", "a number in (0, 1]");
  if (!(rules.cutRatio >= 1 && Number.isFinite(rules.cutRatio)))
    throw bad("cutRatio", "a finite number ≥ 1");
  if (!(rules.maxSkipMs > 0)) throw bad("maxSkipMs", "a positive number of milliseconds");
  return rules;
}
