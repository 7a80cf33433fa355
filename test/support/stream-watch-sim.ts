/**
 * A simulated stream for the stream-watch tests: scored frames on a scripted score timeline (one
 * frame a second by default), a scripted `WatchModel` that counts its calls and can hold a
 * compaction back until more notes arrived, and a scripted conversation for the commentary gates.
 */
import { createHash } from "node:crypto";
import {
  type CompactionPlan,
  DEFAULT_WATCH_SETTINGS,
  type ScoredFrame,
  type WatchActivity,
  type WatchAnswer,
  type WatchModel,
  type WatchSettings,
} from "../../src/frames/index.js";

/** One stretch of the timeline: frames from `from` to `to` seconds (exclusive) at `score`. */
export interface Stretch {
  from: number;
  to: number;
  score: number;
}

/** A frame at `seconds` with change `score` (a scene cut when `cut`), with a real-looking hash. */
export function scoredFrame(seconds: number, score: number, cut = false): ScoredFrame {
  const at = Math.round(seconds * 1000);
  return {
    frame: {
      hash: createHash("sha256").update(`frame-${at}`).digest("hex"),
      mime: "image/jpeg",
      bytes: 1_000,
      width: 1280,
      height: 720,
      at,
      source: "screen",
    },
    change: { score, ema: score, sceneCut: cut, duplicate: score === 0, forced: false },
  };
}

/** Frames every `stepSeconds` over `stretches`, with scene cuts at the seconds in `cuts`. */
export function timeline(
  stretches: readonly Stretch[],
  cuts: readonly number[] = [],
  stepSeconds = 1,
): ScoredFrame[] {
  const frames: ScoredFrame[] = [];
  const cutSet = new Set(cuts);
  for (const stretch of stretches) {
    for (let t = stretch.from; t < stretch.to; t += stepSeconds) {
      frames.push(cutSet.has(t) ? scoredFrame(t, 0.3, true) : scoredFrame(t, stretch.score));
    }
  }
  return frames;
}

/** A scripted vision model: distinct notes, a summary naming what it folded, scripted commentary. */
export class ScriptedWatchModel implements WatchModel {
  calls = { describe: 0, compact: 0, comment: 0 };
  /** Compactions wait until this many more notes were described (0: answer at once). */
  holdCompactionFor = 0;
  readonly #held: { until: number; resolve: () => void }[] = [];
  /** What the commentary answers for the n-th call (1-based). */
  commentary: (n: number) => string = (n) =>
    n % 3 === 0 ? "[SKIP]" : `Commentary ${n}. [[NOTE: inline ${n}]]`;
  /** What the note-taker answers for the n-th look; the same text twice is a duplicate. */
  note: (n: number, at: number) => string = (n) => `note ${n}`;

  async describe(frame: ScoredFrame["frame"]): Promise<WatchAnswer> {
    this.calls.describe += 1;
    const text = this.note(this.calls.describe, frame.at);
    for (const held of this.#held.splice(0)) {
      if (this.calls.describe >= held.until) held.resolve();
      else this.#held.push(held);
    }
    return { text, model: "scripted-vision", usage: { input_tokens: 1_300, output_tokens: 20 } };
  }

  async compact(plan: CompactionPlan): Promise<WatchAnswer> {
    this.calls.compact += 1;
    if (this.holdCompactionFor > 0) {
      await new Promise<void>((resolve) =>
        this.#held.push({ until: this.calls.describe + this.holdCompactionFor, resolve }),
      );
    }
    const folded = plan.notes.map((note) => note.text).join("; ");
    return {
      text: `${plan.summary ? `${plan.summary} | ` : ""}${folded}`,
      model: "scripted-vision",
    };
  }

  async comment(): Promise<WatchAnswer> {
    this.calls.comment += 1;
    return { text: this.commentary(this.calls.comment), model: "scripted-main" };
  }

  /** Lets every held compaction answer (the end of a run). */
  release(): void {
    for (const held of this.#held.splice(0)) held.resolve();
  }
}

/** A scripted conversation: user inputs at `inputs` seconds, foreground busy in `busy` spans. */
export function scriptedActivity(
  clock: () => number,
  inputs: readonly number[],
  busy: readonly [number, number][],
): () => WatchActivity {
  return () => {
    const now = clock();
    let last: number | undefined;
    for (const input of inputs) if (input * 1000 <= now) last = input * 1000;
    const foregroundBusy = busy.some(([from, to]) => now >= from * 1000 && now < to * 1000);
    return { ...(last !== undefined ? { lastUserInputAt: last } : {}), foregroundBusy };
  };
}

/** The adaptive rule, restated plainly: the times (ms) the note-taker should look. */
export function expectedLooks(
  frames: readonly ScoredFrame[],
  s: WatchSettings = DEFAULT_WATCH_SETTINGS,
): number[] {
  const looks: number[] = [];
  for (const { frame, change } of frames) {
    const last = looks.at(-1);
    const since = last === undefined ? Number.POSITIVE_INFINITY : frame.at - last;
    const wait =
      change.sceneCut || change.score >= s.changeThreshold
        ? s.changeMinIntervalSeconds
        : change.score < s.staticFloor
          ? s.noteIdleIntervalSeconds
          : s.noteIntervalSeconds;
    if (since >= wait * 1000) looks.push(frame.at);
  }
  return looks;
}
