import type { ScoredFrame } from "./frame-types.js";
import { activityOf } from "./note-schedule.js";
import type { WatchSettings } from "./watch-settings.js";

/** Why a commentary is due. */
export type CommentaryTrigger = "start" | "interval" | "change";

/** A gate that holds a due commentary back. */
export type CommentaryGate = "disabled" | "no-frame" | "quiet-window" | "foreground-busy";

/** What the commentary loop knows when it decides (folded from the log and the session). */
export interface CommentaryState {
  /** When the last commentary was decided by the model (spoken or `[SKIP]`), epoch ms. */
  readonly lastCommentaryAt?: number;
  /** When the last turn (from any actor, appended by any process) arrived, epoch ms. */
  readonly lastUserInputAt?: number;
  /** Foreground work is running or queued (a run of a turn, or turns waiting). */
  readonly foregroundBusy: boolean;
}

/** The commentary loop's decision for one moment. */
export type CommentaryDecision =
  | { readonly due: false }
  | { readonly due: true; readonly trigger: CommentaryTrigger; readonly gate?: CommentaryGate };

/**
 * Whether a commentary is due now and, if so, the first gate that holds it back. Due: the first
 * commentary of the stream (`start`), `commentaryIntervalSeconds` since the last one (`interval`),
 * or a change (scene cut, forced, score ≥ `changeThreshold`) once
 * `commentaryChangeMinIntervalSeconds` passed since the last one (`change`). Gates, in order:
 * `autonomousCommentaryEnabled` off (`disabled`), no frame yet (`no-frame`), a turn less than
 * `quietWindowSeconds` ago (`quiet-window`), foreground work pending (`foreground-busy`). A
 * commentary goes out only when due with no gate. Pure.
 */
export function decideCommentary(
  settings: WatchSettings,
  state: CommentaryState,
  scored: ScoredFrame | undefined,
  now: number,
): CommentaryDecision {
  const trigger = dueTrigger(settings, state, scored, now);
  if (trigger === undefined) return { due: false };
  const gate = gateOf(settings, state, scored, now);
  return gate ? { due: true, trigger, gate } : { due: true, trigger };
}

function dueTrigger(
  settings: WatchSettings,
  state: CommentaryState,
  scored: ScoredFrame | undefined,
  now: number,
): CommentaryTrigger | undefined {
  if (state.lastCommentaryAt === undefined) return "start";
  const since = now - state.lastCommentaryAt;
  if (since >= settings.commentaryIntervalSeconds * 1000) return "interval";
  if (
    scored !== undefined &&
    activityOf(settings, scored) === "change" &&
    since >= settings.commentaryChangeMinIntervalSeconds * 1000
  ) {
    return "change";
  }
  return undefined;
}

function gateOf(
  settings: WatchSettings,
  state: CommentaryState,
  scored: ScoredFrame | undefined,
  now: number,
): CommentaryGate | undefined {
  if (!settings.autonomousCommentaryEnabled) return "disabled";
  if (scored === undefined) return "no-frame";
  if (
    state.lastUserInputAt !== undefined &&
    now - state.lastUserInputAt < settings.quietWindowSeconds * 1000
  ) {
    return "quiet-window";
  }
  if (state.foregroundBusy) return "foreground-busy";
  return undefined;
}
