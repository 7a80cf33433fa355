import type { ScoredFrame } from "./frame-types.js";
import type { WatchSettings } from "./watch-settings.js";

/** Why the note-taker looks at a frame now. */
export type NoteTrigger = "first" | "cut" | "change" | "interval" | "idle";

/** What the note-taker remembers between frames (a fold of its own notes). */
export interface NoteScheduleState {
  /** When the last note-taker call was made (epoch ms), whatever triggered it. */
  readonly lastNoteAt?: number;
}

/** The note-taker's decision for one frame. */
export type NoteDecision =
  | { readonly fire: true; readonly trigger: NoteTrigger }
  | {
      readonly fire: false;
      /** `cooldown`: a change waits for `changeMinIntervalSeconds`; `waiting`: the interval has not passed. */
      readonly reason: "cooldown" | "waiting";
      /** The interval in force for this frame, in milliseconds. */
      readonly intervalMs: number;
    };

/** The kind of activity a change score shows, by the settings' thresholds. */
export type Activity = "change" | "normal" | "static";

/**
 * How active a frame is: `change` for a scene cut, a forced refresh or a score at or above
 * `changeThreshold`; `static` below `staticFloor`; `normal` between. Pure.
 */
export function activityOf(settings: WatchSettings, scored: ScoredFrame): Activity {
  const { change } = scored;
  if (change.sceneCut || change.forced || change.score >= settings.changeThreshold) return "change";
  return change.score < settings.staticFloor ? "static" : "normal";
}

/**
 * The adaptive interval (seed 002): the first frame is noted at once; a scene cut or a score at or
 * above `changeThreshold` fires now when `changeMinIntervalSeconds` passed since the last note;
 * otherwise a score under `staticFloor` waits `noteIdleIntervalSeconds` since the last note and
 * anything between waits `noteIntervalSeconds`. Never looks at the conversation. Pure.
 */
export function decideNote(
  settings: WatchSettings,
  state: NoteScheduleState,
  scored: ScoredFrame,
  now: number,
): NoteDecision {
  if (state.lastNoteAt === undefined) return { fire: true, trigger: "first" };
  const since = now - state.lastNoteAt;
  const activity = activityOf(settings, scored);
  if (activity === "change") {
    const cooldownMs = settings.changeMinIntervalSeconds * 1000;
    if (since >= cooldownMs) {
      return { fire: true, trigger: scored.change.sceneCut ? "cut" : "change" };
    }
    return { fire: false, reason: "cooldown", intervalMs: cooldownMs };
  }
  const idle = activity === "static";
  const intervalMs =
    (idle ? settings.noteIdleIntervalSeconds : settings.noteIntervalSeconds) * 1000;
  if (since >= intervalMs) return { fire: true, trigger: idle ? "idle" : "interval" };
  return { fire: false, reason: "waiting", intervalMs };
}
