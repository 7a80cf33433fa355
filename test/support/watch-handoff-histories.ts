/**
 * Random histories of a watching agent for the handoff property (issue 18, part 3): user turns
 * (some asking about the screen, so the current frame is attached as an image; some crossing 0.8
 * and 0.9 of the window at once, so handoffs fall among them), frames that the note-taker and the
 * commentary loop look at, and moments where a compaction that was held back finishes. A scripted
 * watch model names every note uniquely (`NOTE<n>X`) and writes the running summary as the list
 * of every note it folded, so a notes block shows whether a note is there, lost or twice.
 */
import fc from "fast-check";
import type { ScoredFrame, WatchModel } from "../../src/frames/index.js";
import { createScriptedProvider, type ScriptedTurn } from "../../src/providers/index.js";
import { filler, SMALL_MODEL } from "./continuity-run.js";

/** One thing that happens in a watching session. */
export type WatchOp =
  | { kind: "turn"; words: number; screen: boolean; cross: "none" | "0.8" | "both" }
  | { kind: "frame"; gapSeconds: number; score: number; repeat: boolean; comment: boolean }
  | { kind: "settle" };

/** A history: the rolling window's size and the operations in order. */
export interface WatchHistory {
  maxNoteEntries: number;
  ops: WatchOp[];
}

const op: fc.Arbitrary<WatchOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("turn" as const),
      words: fc.integer({ min: 1, max: 20 }),
      screen: fc.boolean(),
      cross: fc.constantFrom("none" as const, "0.8" as const, "both" as const, "both" as const),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("frame" as const),
      gapSeconds: fc.integer({ min: 1, max: 40 }),
      score: fc.constantFrom(0.001, 0.008, 0.05, 0.4),
      repeat: fc.boolean(),
      comment: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "settle" as const }) },
);

/** Histories of `min`..`max` operations over a window of 2..4 notes. */
export function watchHistoryArbitrary(min = 10, max = 30): fc.Arbitrary<WatchHistory> {
  return fc.record({
    maxNoteEntries: fc.integer({ min: 2, max: 4 }),
    ops: fc.array(op, { minLength: min, maxLength: max }),
  });
}

/** The text of the `index`-th turn (a screen question when `screen`). */
export function turnText(index: number, turn: Extract<WatchOp, { kind: "turn" }>): string {
  const ask = turn.screen ? "what's on my screen? " : "";
  return `${ask}TURN-${index + 1} ${filler(index + 1, turn.words)}`;
}

const WINDOW = 8192;

/** The foreground model's answers for the turns of `history`, in order. */
export function watchForeground(history: WatchHistory) {
  const script: ScriptedTurn[] = [];
  let index = 0;
  for (const item of history.ops) {
    if (item.kind !== "turn") continue;
    index += 1;
    if (item.cross !== "none") {
      const share = item.cross === "both" ? 0.95 : 0.85;
      script.push({
        text: `<response final="false">PROGRESS-${index}</response>`,
        usage: { inputTokens: Math.round(WINDOW * share) },
      });
    }
    script.push(`<response>ANSWER-${index}</response>`);
  }
  return createScriptedProvider({ model: SMALL_MODEL, loop: true, script });
}

/** Every note token (`NOTE<n>X`) in `text`, in order. */
export function noteTokens(text: string): string[] {
  return text.match(/NOTE\d+X/g) ?? [];
}

/**
 * The scripted watch model: `describe` answers a new `NOTE<n>X` line (or the previous note again
 * when `repeatNext` is set, which the watch skips as a duplicate); `compact` waits until
 * `release()` and then answers the list of every note token of the old summary and the plan's
 * notes; `comment` answers `[SKIP]` or a comment with an inline note, as `commentNext` says.
 */
export function scriptedWatchModel() {
  let next = 0;
  let held: (() => void)[] = [];
  const state = { repeatNext: false, commentNext: false };
  const model: WatchModel = {
    async describe(_frame, previous) {
      if (state.repeatNext && previous !== undefined) return { text: previous };
      next += 1;
      return { text: `screen shows NOTE${next}X` };
    },
    async compact(plan) {
      await new Promise<void>((resolve) => held.push(resolve));
      const folded = [
        ...noteTokens(plan.summary ?? ""),
        ...plan.notes.flatMap((note) => noteTokens(note.text)),
      ];
      return { text: `Folded: ${folded.join(" ")}` };
    },
    async comment() {
      if (!state.commentNext) return { text: "[SKIP]" };
      next += 1;
      return { text: `Something moved. [[NOTE: inline NOTE${next}X]]` };
    },
  };
  return {
    model,
    state,
    /** Lets every compaction held so far finish. */
    release() {
      const waiting = held;
      held = [];
      for (const resolve of waiting) resolve();
    },
  };
}

/** A scored frame of `image` at `at` with `score`. */
export function scoredFrame(
  image: { hash: string; bytes: number },
  at: number,
  score: number,
): ScoredFrame {
  return {
    frame: {
      hash: image.hash,
      mime: "image/jpeg",
      bytes: image.bytes,
      width: 64,
      height: 36,
      at,
      source: "screen",
    },
    change: { score, ema: score, sceneCut: false, duplicate: false, forced: false },
  };
}
