/**
 * `spool frames [continuity]` on a real store a stream watch wrote: the latest frame's file, the
 * recent scores (the noted frames' when the scorer recorded none), the summary and notes, and the
 * counts; `--json` gives the same as one object. The watch lines `spool watch` shows for notes and
 * commentary.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { watchEventLine } from "../src/cli/commands/watch-event-lines.js";
import { createStyle } from "../src/cli/format.js";
import { DEFAULT_WATCH_SETTINGS, StreamWatch } from "../src/frames/index.js";
import { openEventStore } from "../src/log/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { runSpool } from "./support/cli.js";
import { ScriptedWatchModel, timeline } from "./support/stream-watch-sim.js";

let dir: string;
let events: SpoolEvent[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-cli-frames-"));
  const store = await openEventStore({ db: join(dir, "store"), durability: "fast" });
  await store.append({
    continuity: "stream",
    type: "continuity.created",
    data: { title: "stream" },
    actor: "ada",
    origin: "cli",
  });
  const model = new ScriptedWatchModel();
  model.commentary = () => "The boss is down to half. [[NOTE: boss at 50%]]";
  const watch = await StreamWatch.open({
    store,
    continuity: "stream",
    source: "screen",
    model,
    hooks: { noted: () => undefined, keep: () => undefined },
    settings: { ...DEFAULT_WATCH_SETTINGS, maxNoteEntries: 4 },
    activity: () => ({ foregroundBusy: false }),
    framePath: () => ".spool/frames/stream/latest.jpg",
  });
  for (const frame of timeline([{ from: 0, to: 60, score: 0.02 }], [30])) await watch.offer(frame);
  await watch.idle();
  events = [];
  for await (const event of store.read({ continuity: "stream" })) events.push(event);
  await store.close();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const spool = (...args: string[]) => runSpool([...args, "--db", join(dir, "store")], { cwd: dir });

describe("spool frames", () => {
  it("shows the latest frame's file, recent scores, the summary, the notes and the counts", async () => {
    const { code, stdout } = await spool("frames", "stream", "--scores", "3");
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toBe("Frames of stream");
    expect(lines[1]).toMatch(
      /^Latest frame: \.spool\/frames\/stream\/latest\.jpg · 1280×720 · 00:00:5\d · screen$/,
    );
    expect(lines[2]).toMatch(
      /^Recent scores \(noted frames\): (00:00:5\d 0\.020 · ){2}00:00:5\d 0\.020$/,
    );
    expect(stdout).toContain("Summary of earlier notes:");
    expect(stdout).toContain("(commentary) boss at 50%");
    expect(lines.at(-1)).toMatch(
      /^\d+ notes · 0 unchanged · \d+ compactions · \d+ commentaries · 0 skipped$/,
    );
  });

  it("gives one JSON object with --json, and the newest continuity without an argument", async () => {
    const { code, stdout } = await spool("frames", "--json");
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.continuity).toBe("stream");
    expect(report.latest.file).toBe(".spool/frames/stream/latest.jpg");
    expect(report.scoresFrom).toBe("notes");
    expect(report.notes.length).toBeGreaterThan(4);
    expect(report.counts.notes).toBeGreaterThan(20);
  });

  it("refuses a bad --scores and an unknown continuity", async () => {
    expect((await spool("frames", "--scores", "many")).code).toBe(2);
    const missing = await spool("frames", "nowhere");
    expect(missing.code).toBe(1);
  });
});

describe("spool watch's stream-watch lines", () => {
  const style = createStyle(false);
  it("shows commentary as a full line and notes as quiet ones", () => {
    const lines = events.flatMap((event) => watchEventLine(event, style, false) ?? []);
    expect(lines).toContain("◆ commentary: The boss is down to half.");
    expect(lines.some((line) => /^◦ note \[00:00:00\] note 1 · score 0\.020$/.test(line))).toBe(
      true,
    );
    expect(
      lines.some((line) => line.startsWith("◦ note (commentary) [00:00:00] boss at 50%")),
    ).toBe(true);
    expect(
      lines.some((line) => /^◦ \d+ notes folded into the summary \(seq \d+–\d+\)$/.test(line)),
    ).toBe(true);
    const full = events.flatMap((event) => watchEventLine(event, style, true) ?? []);
    expect(full.some((line) => line.startsWith("◦ watch settings (manifest): enabled=true"))).toBe(
      true,
    );
  });
});
