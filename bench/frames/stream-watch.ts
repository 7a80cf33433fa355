/**
 * Vision calls per hour of the stream watch (`src/frames/`): an hour of an idle stream (a static
 * desktop, ambient motion under the static floor) and an hour of a busy one (a boss fight with
 * scene cuts), one frame a second, through the real loops on a real SQLite store with a model
 * that answers at once. Beside each, what a note-taker on a fixed `noteIntervalSeconds` timer
 * calls (the originals' context-brain mode): 360 an hour whatever the screen does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CompactionPlan,
  DEFAULT_WATCH_SETTINGS,
  type ScoredFrame,
  StreamWatch,
  type WatchAnswer,
  type WatchModel,
} from "../../src/frames/index.js";
import { openEventStore } from "../../src/log/index.js";
import type { EngineSection, ResultRow } from "../report.js";

const HOUR_S = 3_600;

/** A frame at `seconds` with change `score`. */
function frameAt(seconds: number, score: number, cut: boolean): ScoredFrame {
  const at = seconds * 1000;
  return {
    frame: {
      hash: at.toString(16).padStart(64, "0"),
      mime: "image/jpeg",
      bytes: 60_000,
      width: 1920,
      height: 1080,
      at,
      source: "screen",
    },
    change: { score, ema: score, sceneCut: cut, duplicate: false, forced: false },
  };
}

/** An idle hour: a static desktop, with a clock ticking (ambient motion under the floor). */
function idleHour(): ScoredFrame[] {
  return Array.from({ length: HOUR_S }, (_, t) => frameAt(t, t % 60 === 0 ? 0.003 : 0.001, false));
}

/** A busy hour: fights (change every frame) between menus (normal motion), a cut every 5 min. */
function busyHour(): ScoredFrame[] {
  return Array.from({ length: HOUR_S }, (_, t) => {
    if (t % 300 === 0 && t > 0) return frameAt(t, 0.3, true);
    const fighting = Math.floor(t / 120) % 2 === 0;
    return frameAt(t, fighting ? 0.016 : 0.007, false);
  });
}

/** Counts the calls of each kind; answers at once, a new note each look, commentary skipped. */
class CountingModel implements WatchModel {
  calls = { describe: 0, compact: 0, comment: 0 };
  async describe(): Promise<WatchAnswer> {
    this.calls.describe += 1;
    return { text: `note ${this.calls.describe}` };
  }
  async compact(plan: CompactionPlan): Promise<WatchAnswer> {
    this.calls.compact += 1;
    return { text: `summary through ${plan.toSeq}` };
  }
  async comment(): Promise<WatchAnswer> {
    this.calls.comment += 1;
    return { text: "[SKIP]" };
  }
}

async function simulate(frames: readonly ScoredFrame[]): Promise<CountingModel["calls"]> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-frames-"));
  const store = await openEventStore({ db: join(dir, "store"), env: {}, durability: "fast" });
  try {
    const model = new CountingModel();
    const watch = await StreamWatch.open({
      store,
      continuity: "bench",
      source: "screen",
      model,
      hooks: { noted: () => undefined, keep: () => undefined },
      settings: DEFAULT_WATCH_SETTINGS,
      activity: () => ({ foregroundBusy: false }),
    });
    for (const frame of frames) await watch.offer(frame);
    await watch.idle();
    return model.calls;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows of the `frames` group's stream-watch table (counts are exact: one run suffices). */
export async function measureStreamWatch(progress: (line: string) => void): Promise<EngineSection> {
  const fixed = HOUR_S / DEFAULT_WATCH_SETTINGS.noteIntervalSeconds;
  const rows: ResultRow[] = [];
  const notes: string[] = [];
  for (const [name, frames] of [
    ["idle", idleHour()],
    ["busy", busyHour()],
  ] as const) {
    progress(`frames: simulating an ${name} hour`);
    const started = performance.now();
    const calls = await simulate(frames);
    const wall = performance.now() - started;
    rows.push({
      measure: `note-taker vision calls per hour, ${name} stream`,
      unit: "calls/h",
      spool: calls.describe,
      ceiling: fixed,
      ...(name === "idle" ? { target: { maxRatio: 0.4 } } : {}),
    });
    rows.push({
      measure: `commentary calls per hour, ${name} stream`,
      unit: "calls/h",
      spool: calls.comment,
    });
    notes.push(
      `${name}: ${calls.describe} notes, ${calls.compact} compactions (text only), ${calls.comment} commentaries; the simulated hour took ${(wall / 1000).toFixed(1)} s on SQLite`,
    );
  }
  notes.push(
    `baseline: a note-taker on a fixed ${DEFAULT_WATCH_SETTINGS.noteIntervalSeconds}-s timer (${fixed}/h); settings are the defaults (idle ${DEFAULT_WATCH_SETTINGS.noteIdleIntervalSeconds} s, change cooldown ${DEFAULT_WATCH_SETTINGS.changeMinIntervalSeconds} s, commentary ${DEFAULT_WATCH_SETTINGS.commentaryIntervalSeconds} s)`,
  );
  return {
    title: "Frames: stream-watch vision calls per hour",
    baseline: "fixed 10 s",
    rows,
    notes,
  };
}
