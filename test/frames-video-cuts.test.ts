/**
 * The change score over real video decoded by the bundled ffmpeg: scene cuts found at exactly the
 * frames where the synthetic video cuts (and never inside its 25-frame fade), an hour of an idle
 * screen scored only low (read in seconds: frame times come from the video, not the wall clock),
 * and a slow drift that adds up against the last noted frame although no two neighbouring frames
 * differ much (the rule the originals used, previous frame against frame, never fires on it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FrameSourceEvent,
  type FrameWatch,
  readFrameSources,
  type ScoredFrame,
  videoFrames,
  watchFrames,
} from "../src/frames/index.js";
import {
  CUTS,
  CUTS_FPS,
  CUTS_FRAMES,
  cutsVideo,
  driftVideo,
  FADE,
  idleHourVideo,
} from "./support/frame-videos.js";
import { tempStore } from "./support/transcripts.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-frames-video-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const START = Date.UTC(2026, 0, 1);
const unlimited = { maxFramesPerMinute: 1_000_000, burst: 1_000 };

/** Reads the whole video through a watch; `decide` is the consumer (it may note frames). */
async function readAll(
  watch: FrameWatch,
  decide: (scored: ScoredFrame) => void,
): Promise<ScoredFrame[]> {
  const all: ScoredFrame[] = [];
  for await (const scored of watch) {
    all.push(scored);
    decide(scored);
  }
  return all;
}

function videoWatch(input: string, fps: number, events: FrameSourceEvent[], extra = {}) {
  return watchFrames({
    source: "video",
    open: (hooks) => videoFrames({ ...hooks, input, fps, clock: () => START }),
    limits: unlimited,
    overflow: "wait",
    onEvent: (event) => events.push(event),
    ...extra,
  });
}

describe("scene cuts in synthetic video", () => {
  it("finds each cut at its true frame, none inside the fade, and logs the scores", async () => {
    const { store, cleanup } = await tempStore("spool-frames-cuts-");
    try {
      const events: FrameSourceEvent[] = [];
      const watch = videoWatch(cutsVideo(dir), CUTS_FPS, events, {
        log: { store, continuity: "watching" },
      });
      // The consumer a note-taker would be: it looks at cuts and forced refreshes.
      const frames = await readAll(watch, (scored) => {
        if (scored.change.sceneCut || scored.change.forced) watch.noted(scored.frame);
      });
      expect(frames).toHaveLength(CUTS_FRAMES);
      const index = (scored: ScoredFrame) =>
        Math.round((scored.frame.at - START) / (1000 / CUTS_FPS));
      expect(frames.map(index)).toEqual([...Array(CUTS_FRAMES).keys()]);
      const cuts = frames.filter((scored) => scored.change.sceneCut).map(index);
      expect(cuts).toEqual(CUTS);
      // The fade (and the black after it) changes the picture a lot, but never at once.
      const fade = frames.filter((s) => index(s) >= FADE.from && index(s) < CUTS[3]!);
      expect(Math.max(...fade.map((s) => s.change.score))).toBeGreaterThan(0.3);
      expect(fade.every((s) => (s.change.motion ?? 0) < 0.05)).toBe(true);
      expect(events.map((event) => event.type)).toEqual(["started", "stopped"]);

      await store.flush();
      const [state] = await readFrameSources(store, "watching", { recent: 1_000 });
      expect(state).toMatchObject({
        source: "video",
        kind: "video",
        status: "stopped",
        scored: CUTS_FRAMES,
        sceneCuts: CUTS.length,
      });
      expect(
        state!.recent.filter((point) => point.sceneCut).map((point) => (point.at - START) / 200),
      ).toEqual(CUTS);
      expect(state!.recent.map((point) => point.score)).toEqual(
        frames.map((s) => Math.round(s.change.score * 10_000) / 10_000),
      );
    } finally {
      await cleanup();
    }
  });

  it("scores an idle hour low, refreshing only on the maximum skip interval", async () => {
    const events: FrameSourceEvent[] = [];
    const watch = videoWatch(idleHourVideo(dir), 0.25, events, { scorer: { maxSkipMs: 300_000 } });
    const noted: number[] = [];
    const frames = await readAll(watch, (scored) => {
      if (scored.change.sceneCut || scored.change.forced) {
        watch.noted(scored.frame);
        noted.push(scored.frame.at - START);
      }
    });
    expect(frames).toHaveLength(900);
    expect(frames.at(-1)!.frame.at - START).toBe(3_596_000);
    const afterFirst = frames.slice(1);
    expect(afterFirst.every((s) => s.change.score < 0.01)).toBe(true);
    expect(afterFirst.some((s) => s.change.score > 0)).toBe(true);
    expect(frames.some((s) => s.change.sceneCut)).toBe(false);
    // The first frame (nothing noted yet), then a look every 5 minutes of video: at the first
    // frame that differs from the noted one (an exact duplicate has nothing new to show).
    expect(noted[0]).toBe(0);
    expect(noted).toHaveLength(12);
    for (let look = 1; look < noted.length; look++) {
      expect(noted[look]! - noted[look - 1]!).toBeGreaterThanOrEqual(300_000);
      expect(noted[look]! - noted[look - 1]!).toBeLessThanOrEqual(304_000);
    }
  });

  it("adds slow drift up against the last noted frame", async () => {
    const events: FrameSourceEvent[] = [];
    const watch = videoWatch(driftVideo(dir), 5, events);
    const threshold = 0.1;
    const notes: ScoredFrame[] = [];
    const frames = await readAll(watch, (scored) => {
      if (scored.change.forced || scored.change.score >= threshold) {
        watch.noted(scored.frame);
        notes.push(scored);
      }
    });
    expect(frames).toHaveLength(100);
    // Frame to frame, the picture never changes by the threshold: the old rule never fires…
    expect(Math.max(...frames.slice(1).map((s) => s.change.motion ?? 0))).toBeLessThan(
      threshold / 3,
    );
    // …but against the frame last looked at, the change adds up, again and again.
    expect(notes.length).toBeGreaterThanOrEqual(6);
    expect(frames.some((s) => s.change.sceneCut)).toBe(false);
  });
});
