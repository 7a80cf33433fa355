/**
 * Bad input never crashes a frame watch and never costs unbounded memory: empty, truncated,
 * non-image and 40 MB frames are refused with clear events (the big one without being read or
 * decoded) while good frames around them are still scored; a video that ends, ffmpeg killed
 * mid-stream, a missing file, a missing ffmpeg and an unreachable stream URL each end the watch
 * with one clear event, and a stream URL's password appears nowhere.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  directoryFrames,
  type FrameSourceEvent,
  JpegSplitter,
  pushFrameSource,
  readFrameSources,
  videoFrames,
  watchFrames,
} from "../src/frames/index.js";
import { shortVideo } from "./support/frame-videos.js";
import { tempStore } from "./support/transcripts.js";

let dir: string;
let jpeg: Buffer;
let other: Buffer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-frames-bad-"));
  const picture = (r: number) =>
    sharp({ create: { width: 320, height: 180, channels: 3, background: { r, g: 90, b: 40 } } })
      .jpeg()
      .toBuffer();
  jpeg = await picture(20);
  other = await picture(230);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FORTY_MB = 40 * 1024 * 1024;

describe("bad frames", () => {
  it("refuses empty, non-image, truncated and 40 MB pushed frames and scores the good ones", async () => {
    const { store, cleanup } = await tempStore("spool-frames-bad-");
    try {
      const pushed = pushFrameSource({ source: "upload", buffer: 16 });
      const events: FrameSourceEvent[] = [];
      const watch = watchFrames({
        source: "upload",
        open: (hooks) => pushed.frames(hooks),
        limits: { maxFramesPerMinute: 10_000, burst: 100 },
        overflow: "wait",
        queue: 16,
        log: { store, continuity: "uploads" },
        onEvent: (event) => events.push(event),
      });
      const reading = (async () => {
        const scored = [];
        for await (const frame of watch) scored.push(frame);
        return scored;
      })();
      let at = 1_000;
      const push = (data: Buffer) => {
        at += 100;
        return pushed.pushFrame({ data, at });
      };
      expect(push(jpeg)).toEqual({ accepted: true });
      expect(push(Buffer.alloc(0))).toEqual({ accepted: false, reason: "empty" });
      expect(push(Buffer.from("GIF89a, not a frame at all"))).toEqual({
        accepted: false,
        reason: "unsupported",
      });
      expect(push(Buffer.alloc(FORTY_MB, 0xff))).toEqual({ accepted: false, reason: "too-big" });
      expect(push(jpeg.subarray(0, Math.floor(jpeg.length / 2)))).toEqual({ accepted: true });
      expect(push(other)).toEqual({ accepted: true });
      pushed.end();
      const scored = await reading;

      expect(scored.map((s) => s.frame.hash)).toEqual([
        expect.stringMatching(/^[0-9a-f]{64}$/),
        expect.stringMatching(/^[0-9a-f]{64}$/),
      ]);
      expect(scored[1]!.frame).toMatchObject({ width: 320, height: 180, bytes: other.length });
      const rejected = events.flatMap((event) => (event.type === "rejected" ? [event] : []));
      expect(rejected.map((event) => [event.reason, event.bytes])).toEqual([
        ["empty", 0],
        ["unsupported", 26],
        ["too-big", FORTY_MB],
        ["undecodable", Math.floor(jpeg.length / 2)],
      ]);
      expect(rejected[3]!.detail).toMatch(/could not be decoded/);
      expect(watch.stats).toMatchObject({ received: 3, scored: 2, rejected: 4 });
      expect(events.at(-1)).toMatchObject({ type: "stopped", reason: "ended", frames: 3 });

      await store.flush();
      const [state] = await readFrameSources(store, "uploads");
      expect(state).toMatchObject({
        status: "stopped",
        scored: 2,
        rejected: { empty: 1, unsupported: 1, "too-big": 1, undecodable: 1 },
      });
    } finally {
      await cleanup();
    }
  });

  it("refuses a 40 MB file in a directory without reading it, and an empty one", async () => {
    const folder = join(dir, "shots");
    mkdirSync(folder);
    writeFileSync(join(folder, "001.jpg"), jpeg);
    writeFileSync(join(folder, "002.jpg"), Buffer.alloc(FORTY_MB, 0xab));
    writeFileSync(join(folder, "003.jpg"), Buffer.alloc(0));
    writeFileSync(join(folder, "004.png"), await sharp(other).png().toBuffer());
    writeFileSync(join(folder, "notes.txt"), "not an image");
    const events: FrameSourceEvent[] = [];
    const base = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const sample = () => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
    };
    const watch = watchFrames({
      source: "shots",
      open: (hooks) => directoryFrames({ ...hooks, directory: folder, clock: () => 5_000 }),
      overflow: "wait",
      onEvent: (event) => {
        sample();
        events.push(event);
      },
    });
    const names: string[] = [];
    for await (const scored of watch) {
      sample();
      names.push(`${scored.frame.mime} ${scored.frame.width}x${scored.frame.height}`);
    }
    expect(names).toEqual(["image/jpeg 320x180", "image/png 320x180"]);
    expect(
      events
        .filter((e) => e.type === "rejected")
        .map((e) => e.type === "rejected" && [e.reason, e.bytes]),
    ).toEqual([
      ["too-big", FORTY_MB],
      ["empty", 0],
    ]);
    // The 40 MB file was never held: memory outside the heap never grew by anything near it.
    expect(peak).toBeLessThan(FORTY_MB / 4);
  });

  it("holds no more than the frame limit of an oversized JPEG streaming by", () => {
    const limit = 1024 * 1024;
    const splitter = new JpegSplitter(limit);
    const huge = Buffer.alloc(FORTY_MB, 0x11);
    huge[0] = 0xff;
    huge[1] = 0xd8;
    huge[huge.length - 2] = 0xff;
    huge[huge.length - 1] = 0xd9;
    const stream = Buffer.concat([huge, jpeg]);
    const pieces = [];
    let most = 0;
    for (let at = 0; at < stream.length; at += 65_537) {
      pieces.push(...splitter.push(stream.subarray(at, at + 65_537)));
      most = Math.max(most, splitter.held);
    }
    expect(most).toBeLessThanOrEqual(limit);
    expect(pieces).toEqual([
      { kind: "too-big", bytes: FORTY_MB },
      { kind: "frame", data: jpeg },
    ]);
  });
});

describe("video that goes wrong", () => {
  const run = async (
    options: Parameters<typeof videoFrames>[0] extends infer O
      ? Omit<O & object, "source" | "signal" | "onEvent" | "maxFrameBytes">
      : never,
    onFrame?: (events: FrameSourceEvent[]) => void,
  ) => {
    const events: FrameSourceEvent[] = [];
    const watch = watchFrames({
      source: "video",
      open: (hooks) => videoFrames({ ...hooks, ...options }),
      limits: { maxFramesPerMinute: 1_000_000, burst: 1_000 },
      overflow: "wait",
      onEvent: (event) => events.push(event),
    });
    let frames = 0;
    for await (const _ of watch) {
      frames += 1;
      onFrame?.(events);
    }
    return { events, frames };
  };

  it("ends cleanly when the video ends", async () => {
    const { events, frames } = await run({ input: shortVideo(dir), fps: 5 });
    expect(frames).toBe(50);
    expect(events.map((e) => e.type)).toEqual(["started", "stopped"]);
    expect(events[1]).toMatchObject({ reason: "ended", frames: 50 });
  });

  it("reports ffmpeg killed mid-stream as a final failure and ends the watch", async () => {
    const input = shortVideo(dir);
    let killed = false;
    const { events, frames } = await run({ input, fps: 5, live: true }, (seen) => {
      if (killed) return;
      killed = true;
      const started = seen.find((e) => e.type === "started");
      process.kill(started!.type === "started" ? started!.pid! : 0, "SIGKILL");
    });
    expect(frames).toBeGreaterThanOrEqual(1);
    expect(frames).toBeLessThan(50);
    const failed = events.at(-1)!;
    expect(failed).toMatchObject({ type: "failed", final: true });
    expect(failed.type === "failed" && failed.error.code).toBe("frame.ffmpeg-failed");
    expect(failed.type === "failed" && failed.error.message).toMatch(/was killed \(SIGKILL\)/);
  });

  it("puts ffmpeg's own words in the error for a file that is not there", async () => {
    const { events, frames } = await run({ input: join(dir, "missing.mp4") });
    expect(frames).toBe(0);
    const failed = events.at(-1)!;
    expect(failed.type === "failed" && failed.error.message).toMatch(
      /exited with code \d+ after 0 frames: .*No such file or directory/,
    );
    expect(failed.type === "failed" && failed.stderrTail).toMatch(/No such file or directory/);
  });

  it("says so when ffmpeg cannot be started", async () => {
    const { events } = await run({
      input: shortVideo(dir),
      ffmpegPath: join(dir, "no-ffmpeg-here"),
    });
    const failed = events.at(-1)!;
    expect(failed).toMatchObject({ type: "failed", final: true });
    expect(failed.type === "failed" && failed.error.code).toBe("frame.ffmpeg-missing");
  });

  it("keeps a stream URL's password out of events and errors", async () => {
    const { events } = await run({
      input: "http://watcher:s3cr3t-pw@127.0.0.1:9/live.m3u8",
      fps: 1,
    });
    expect(events[0]).toMatchObject({
      type: "started",
      target: "http://watcher@127.0.0.1:9/live.m3u8",
    });
    expect(events.at(-1)).toMatchObject({ type: "failed", final: true });
    expect(
      JSON.stringify(events, (key, value) =>
        key === "error" ? { message: value.message } : value,
      ),
    ).not.toContain("s3cr3t");
  });
});

/** Keeps the bundled ffmpeg honest about the filters the proofs use. */
it("uses a bundled ffmpeg that has the lavfi sources the proofs need", () => {
  const filters = execFileSync(pathOfFfmpeg(), ["-hide_banner", "-filters"], { encoding: "utf8" });
  for (const name of ["testsrc2", "mandelbrot", "life", "smptebars", "fade", "concat"]) {
    expect(filters).toMatch(new RegExp(`\\s${name}\\s`));
  }
});

function pathOfFfmpeg(): string {
  return execFileSync(
    process.execPath,
    ["-e", "process.stdout.write(require('@ffmpeg-installer/ffmpeg').path)"],
    { encoding: "utf8" },
  );
}
