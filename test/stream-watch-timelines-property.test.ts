/**
 * Over random timelines (idle, ambient and busy stretches, scene cuts) and random compaction
 * latencies, the real loops on a real store look exactly when the adaptive rule says, and no note
 * is lost though notes keep arriving while compactions run.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_WATCH_SETTINGS, foldWatchEvents, StreamWatch } from "../src/frames/index.js";
import { isEvent, type SpoolEvent } from "../src/spec/index.js";
import { expectedLooks, ScriptedWatchModel, scoredFrame } from "./support/stream-watch-sim.js";
import { tempStore } from "./support/transcripts.js";

let temp: Awaited<ReturnType<typeof tempStore>>;
beforeAll(async () => {
  temp = await tempStore("spool-watch-timelines-");
});
afterAll(() => temp.cleanup());

const frameArb = fc.record({
  gap: fc.integer({ min: 1, max: 15 }),
  score: fc.constantFrom(0, 0.001, 0.004, 0.006, 0.009, 0.01, 0.05, 0.4),
  cut: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
});

let runs = 0;

describe("random timelines through the loops", () => {
  it("look by the adaptive rule and lose no note", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(frameArb, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        async (steps, hold, window) => {
          const continuity = `c${++runs}`;
          const settings = { ...DEFAULT_WATCH_SETTINGS, maxNoteEntries: window };
          const model = new ScriptedWatchModel();
          model.holdCompactionFor = hold;
          model.commentary = () => "[SKIP]";
          const watch = await StreamWatch.open({
            store: temp.store,
            continuity,
            source: "screen",
            model,
            hooks: { noted: () => undefined, keep: () => undefined },
            settings,
            activity: () => ({ foregroundBusy: false }),
          });
          let t = 0;
          const frames = steps.map((step) => {
            t += step.gap;
            return scoredFrame(t, step.cut ? 0.3 : step.score, step.cut);
          });
          for (const frame of frames) await watch.offer(frame);
          model.release();
          await watch.idle();
          const events: SpoolEvent[] = [];
          for await (const event of temp.store.read({ continuity })) events.push(event);
          const looks = events.flatMap((event) =>
            isEvent(event, "note.added") && event.data.by === "note-taker"
              ? [event.data.frame.at]
              : [],
          );
          expect(looks).toEqual(expectedLooks(frames, settings));
          const state = foldWatchEvents(events);
          const compacted = events.filter((event) => isEvent(event, "notes.compacted"));
          for (const event of events) {
            if (!isEvent(event, "note.added")) continue;
            const held = [...state.notes, ...state.pending].some((note) => note.seq === event.seq);
            const covered = compacted.some(
              (c) =>
                event.seq >= c.data.from_seq && event.seq <= c.data.to_seq && c.seq > event.seq,
            );
            expect(held || covered).toBe(true);
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
