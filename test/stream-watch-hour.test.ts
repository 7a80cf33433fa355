/**
 * An hour of a simulated stream (one frame a second) through the real loops on a real SQLite
 * store, with a scripted vision model: the note-taker's looks per stretch are what the adaptive
 * rule dictates, duplicates are skipped, no note is lost across compactions (which run while
 * notes keep arriving), every commentary respects every gate, a runtime settings change takes
 * effect at the next decision, and replaying the log rebuilds the same events with no model call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_WATCH_SETTINGS,
  foldWatchEvents,
  recordedWatchModel,
  type ScoredFrame,
  StreamWatch,
  type WatchModel,
} from "../src/frames/index.js";
import type { EventStore } from "../src/log/index.js";
import { isEvent, type SpoolEvent } from "../src/spec/index.js";
import {
  expectedLooks,
  ScriptedWatchModel,
  type Stretch,
  scriptedActivity,
  timeline,
} from "./support/stream-watch-sim.js";
import { tempStore } from "./support/transcripts.js";

const STRETCHES: Stretch[] = [
  { from: 0, to: 600, score: 0.001 }, // idle desktop
  { from: 600, to: 1800, score: 0.007 }, // ambient motion: normal interval
  { from: 1800, to: 2400, score: 0.02 }, // a boss fight: change every frame
  { from: 2400, to: 3600, score: 0.002 }, // idle again, with scene cuts
];
const CUTS = [2700, 3000, 3300];
const INPUTS = Array.from({ length: 15 }, (_, i) => 620 + i * 40); // chatting from 620 s to 1180 s
const BUSY: [number, number][] = [[1300, 1400]];
const DISABLE_AT = 3000;

interface Run {
  events: SpoolEvent[];
  noted: string[];
  kept: Set<string>;
}

async function simulate(
  store: EventStore,
  model: WatchModel & { release(): void },
  frames: readonly ScoredFrame[],
): Promise<Run> {
  let now = 0;
  const noted: string[] = [];
  const kept = new Set<string>();
  const watch = await StreamWatch.open({
    store,
    continuity: "stream",
    source: "screen",
    model,
    hooks: { noted: (frame) => noted.push(frame.hash), keep: (frame) => void kept.add(frame.hash) },
    settings: DEFAULT_WATCH_SETTINGS,
    activity: scriptedActivity(() => now, INPUTS, BUSY),
    conversation: () => "user: how is the run going?",
  });
  for (const frame of frames) {
    now = frame.frame.at;
    if (now === DISABLE_AT * 1000) {
      await watch.changeSettings({ autonomousCommentaryEnabled: false }, "cli");
    }
    await watch.offer(frame);
  }
  model.release();
  await watch.idle();
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity: "stream" })) events.push(event);
  return { events, noted, kept };
}

const lookTimes = (events: readonly SpoolEvent[]) =>
  events.flatMap((event) =>
    (isEvent(event, "note.added") && event.data.by === "note-taker") ||
    isEvent(event, "note.skipped")
      ? [event.data.frame.at]
      : [],
  );

const inStretch = (times: readonly number[], from: number, to: number) =>
  times.filter((at) => at >= from * 1000 && at < to * 1000).length;

function scriptedModel(): ScriptedWatchModel {
  const model = new ScriptedWatchModel();
  // The idle desktop looks the same every time: its notes after the first are duplicates.
  model.note = (n, at) => (at < 600_000 ? "Idle desktop, nothing open." : `note ${n}`);
  model.holdCompactionFor = 3;
  return model;
}

// One hour is simulated once (a few seconds on a real store) and every test reads its log.
const frames = timeline(STRETCHES, CUTS);
const model = scriptedModel();
let live: Awaited<ReturnType<typeof tempStore>>;
let run: Run;

beforeAll(async () => {
  live = await tempStore("spool-stream-watch-");
  run = await simulate(live.store, model, frames);
});
afterAll(() => live.cleanup());

describe("an hour-long simulated stream", () => {
  it("looks as often as the adaptive rule says, per stretch, and skips duplicate notes", () => {
    const { events, noted } = run;
    const looks = lookTimes(events);
    expect(looks).toEqual(expectedLooks(frames));
    // The stretches in closed form: idle every 30 s, ambient every 10 s, a fight every 2 s.
    expect(inStretch(looks, 0, 600)).toBe(20);
    expect(inStretch(looks, 600, 1800)).toBe(120);
    expect(inStretch(looks, 1800, 2400)).toBe(300);
    expect(model.calls.describe).toBe(looks.length);
    // Each look told the scorer which frame is the new baseline.
    expect(noted).toHaveLength(looks.length);
    const skipped = events.filter((event) => isEvent(event, "note.skipped"));
    expect(skipped).toHaveLength(19);
    const idleNotes = events.filter(
      (event) =>
        isEvent(event, "note.added") &&
        event.data.by === "note-taker" &&
        event.data.frame.at < 600_000,
    );
    expect(idleNotes).toHaveLength(1);
    // The cuts fire at once.
    for (const cut of CUTS) expect(looks).toContain(cut * 1000);
  });

  it("loses no note across compactions that run while notes keep arriving", () => {
    const { events } = run;
    const notes = events.filter((event) => isEvent(event, "note.added"));
    const compactions = events.filter((event) => isEvent(event, "notes.compacted"));
    expect(compactions.length).toBeGreaterThan(50);
    // Some compaction finished after notes were added while it ran.
    const midway = compactions.filter((event) =>
      notes.some((note) => note.seq > event.data.to_seq && note.seq < event.seq),
    );
    expect(midway.length).toBeGreaterThan(0);
    const state = foldWatchEvents(events);
    const covered = new Set<number>();
    for (const event of compactions) {
      for (const note of notes) {
        if (note.seq >= event.data.from_seq && note.seq <= event.data.to_seq) covered.add(note.seq);
      }
    }
    const kept = new Set([...state.notes, ...state.pending].map((note) => note.seq));
    for (const note of notes) {
      expect(covered.has(note.seq) || kept.has(note.seq), `note ${note.seq} lost`).toBe(true);
    }
    // The summary carried every note it folded: the last summary names them all.
    const summary = state.summary ?? "";
    for (const note of notes.filter((n) => n.seq <= state.summaryTo)) {
      expect(summary).toContain(note.data.text);
    }
    expect(state.notes).toHaveLength(DEFAULT_WATCH_SETTINGS.maxNoteEntries);
  });

  it("comments only when every gate is open, and logs each gate that held one back", () => {
    const { events } = run;
    const s = DEFAULT_WATCH_SETTINGS;
    const decided = events.filter(
      (event) =>
        isEvent(event, "commentary.added") ||
        (isEvent(event, "commentary.skipped") && event.data.gate === "skip"),
    ) as SpoolEvent<{ trigger: string; frame: { at: number } }>[];
    expect(decided[0]!.data.trigger).toBe("start");
    expect(decided[0]!.data.frame.at).toBe(0);
    let previous: number | undefined;
    for (const event of decided) {
      const at = event.data.frame.at;
      const lastInput = INPUTS.filter((input) => input * 1000 <= at).at(-1);
      if (lastInput !== undefined) {
        expect(at - lastInput * 1000).toBeGreaterThanOrEqual(s.quietWindowSeconds * 1000);
      }
      expect(BUSY.some(([from, to]) => at >= from * 1000 && at < to * 1000)).toBe(false);
      expect(at).toBeLessThan(DISABLE_AT * 1000);
      if (previous !== undefined) {
        const gap = at - previous;
        expect(gap).toBeGreaterThanOrEqual(s.commentaryChangeMinIntervalSeconds * 1000);
        if (gap < s.commentaryIntervalSeconds * 1000) expect(event.data.trigger).toBe("change");
      }
      previous = at;
    }
    const gates = new Set(
      events.flatMap((event) => (isEvent(event, "commentary.skipped") ? [event.data.gate] : [])),
    );
    expect([...gates].sort()).toEqual(["disabled", "foreground-busy", "quiet-window", "skip"]);
    // [[NOTE: …]] lines became notes and left the shown text.
    const spoken = events.filter((event) => isEvent(event, "commentary.added"));
    expect(spoken.length).toBeGreaterThan(20);
    for (const event of spoken) expect(event.data.text).not.toContain("[[NOTE");
    const inline = events.filter(
      (event) => isEvent(event, "note.added") && event.data.by === "commentary",
    );
    expect(inline).toHaveLength(spoken.length);
    // The change at runtime is an event, and the next decision obeyed it.
    const change = events.find(
      (event) => isEvent(event, "watch.settings-changed") && event.data.by === "cli",
    );
    expect(change?.data).toMatchObject({ changed: ["autonomousCommentaryEnabled"] });
  });

  it("replays from the log to the same events without calling any model", async () => {
    const first = run;
    const calls = { ...model.calls };
    const replayStore = await tempStore("spool-stream-watch-replay-");
    try {
      const recorded = recordedWatchModel(first.events);
      const second = await simulate(replayStore.store, recorded, frames);
      const shape = (events: readonly SpoolEvent[]) =>
        events.map((event) => ({ seq: event.seq, type: event.type, data: event.data }));
      expect(shape(second.events)).toEqual(shape(first.events));
      expect(recorded.calls).toEqual(calls);
      expect(model.calls).toEqual(calls);
      expect(foldWatchEvents(second.events)).toEqual(foldWatchEvents(first.events));
    } finally {
      await replayStore.cleanup();
    }
  });
});
