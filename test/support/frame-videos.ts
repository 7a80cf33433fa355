/**
 * Synthetic videos for the frames tests, made with the bundled ffmpeg from its lavfi test sources
 * into a temporary folder: small (320×180) and at low frame rates, so they take well under a
 * second to make and to read.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { bundledFfmpegPath } from "../../src/frames/index.js";

const SIZE = "320x180";

function ffmpeg(args: string[]): void {
  execFileSync(bundledFfmpegPath(), ["-hide_banner", "-loglevel", "error", "-y", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
}

/** The frame numbers (at `CUTS_FPS`) where `cutsVideo` cuts, and where its fade runs. */
export const CUTS = [20, 40, 60, 100];
export const FADE = { from: 70, to: 95 };
export const CUTS_FPS = 5;
export const CUTS_FRAMES = 120;

/**
 * 24 s at 5 fps: testsrc2 (0–19), mandelbrot (20–39), life (40–59, started 5 generations in, past
 * its first violent steps), smptebars (60–99) fading to black over the 25 frames 70–94, black to
 * 99, then testsrc2 again (100–119). Cuts at exactly frames 20, 40, 60 and 100.
 */
export function cutsVideo(dir: string): string {
  const path = join(dir, "cuts.avi");
  const source = (spec: string) => [
    "-f",
    "lavfi",
    "-i",
    `${spec}${spec.includes("=") ? ":" : "="}size=${SIZE}:rate=${CUTS_FPS}`,
  ];
  ffmpeg([
    ...source("testsrc2=duration=4"),
    ...source("mandelbrot"),
    ...source("life=mold=10:ratio=0.5:death_color=#C83232:life_color=#00ff00"),
    ...source("smptebars=duration=8"),
    ...source("testsrc2=duration=4"),
    "-filter_complex",
    [
      "[0]format=yuv420p[a]",
      "[1]trim=duration=4,setpts=PTS-STARTPTS,format=yuv420p[b]",
      "[2]trim=start_frame=5:end_frame=25,setpts=PTS-STARTPTS,format=yuv420p[c]",
      "[3]fade=t=out:start_frame=10:nb_frames=25,format=yuv420p[d]",
      "[4]format=yuv420p[e]",
      "[a][b][c][d][e]concat=n=5:v=1:a=0[out]",
    ].join(";"),
    "-map",
    "[out]",
    "-c:v",
    "mjpeg",
    "-q:v",
    "3",
    path,
  ]);
  return path;
}

/** An hour of a still picture (SMPTE bars) with a 3×8 cursor on for 4 s and off for 4 s, at 1 fps. */
export function idleHourVideo(dir: string): string {
  const path = join(dir, "idle.mp4");
  ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `smptebars=size=${SIZE}:rate=1:duration=3600`,
    "-vf",
    "drawbox=x=20:y=150:w=3:h=8:color=white:t=fill:enable='lt(mod(t\\,8)\\,4)',format=yuv420p",
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-crf",
    "20",
    path,
  ]);
  return path;
}

/** 20 s at 5 fps of black brightening evenly to white: every step small, the whole large. */
export function driftVideo(dir: string): string {
  const path = join(dir, "drift.avi");
  ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `color=c=white:size=${SIZE}:rate=5:duration=20`,
    "-vf",
    "fade=t=in:start_frame=0:nb_frames=100,format=yuv420p",
    "-c:v",
    "mjpeg",
    "-q:v",
    "3",
    path,
  ]);
  return path;
}

/** A 10 s testsrc2 clip at 5 fps (50 frames). */
export function shortVideo(dir: string): string {
  const path = join(dir, "short.avi");
  ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=${SIZE}:rate=5:duration=10`,
    "-c:v",
    "mjpeg",
    "-q:v",
    "3",
    path,
  ]);
  return path;
}
