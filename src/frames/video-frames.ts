import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { redactUrl } from "../log/index.js";
import { bundledFfmpegPath } from "./ffmpeg-path.js";
import { FrameError } from "./frame-error.js";
import { DEFAULT_MAX_FRAME_BYTES, type FrameSourceOptions, report } from "./frame-source.js";
import type { IncomingFrame } from "./frame-types.js";
import { JpegSplitter } from "./jpeg-splitter.js";

/** Options of `videoFrames`. */
export interface VideoFramesOptions extends FrameSourceOptions {
  /** A video file's path, or a stream URL ffmpeg reads (`rtsp://`, `http://…m3u8`, `udp://`). */
  input: string;
  /** Frames per second taken from the video (default 2). */
  fps?: number;
  /** Read a file at its own speed, as if live (ffmpeg's `-re`). */
  live?: boolean;
  /** Scale frames to this width (height keeps the aspect); default the video's own size. */
  width?: number;
  /** JPEG quality, ffmpeg's `-q:v` from 2 (best) to 31 (default 5). */
  quality?: number;
  /**
   * `stream`: a frame's `at` is the start time plus its position in the video (an hour of video
   * read in seconds still spans an hour); `clock`: when it arrived. Default `stream` for files
   * read as fast as possible, `clock` for URLs and `live`.
   */
  timing?: "stream" | "clock";
  /** The ffmpeg binary (default the one `@ffmpeg-installer/ffmpeg` bundles). */
  ffmpegPath?: string;
}

/** Lines of ffmpeg's stderr kept for errors (its last 4 KB). */
const STDERR_TAIL = 4_096;

/**
 * Frames of a video file or stream, decoded by ffmpeg as a child process into MJPEG on a pipe
 * (`image2pipe` at `fps`) and split on JPEG markers.
 *
 * Contract: reading is paced by the consumer (ffmpeg waits on a full pipe, so memory stays
 * bounded); a frame larger than `maxFrameBytes` is reported `rejected` and never held whole. The
 * end of the input gives `stopped` `ended`; ffmpeg failing or being killed gives a final `failed`
 * (`frame.ffmpeg-failed`) whose message holds the tail of its stderr; aborting kills ffmpeg and
 * gives `stopped` `aborted`. Passwords in URLs never reach events or errors. Never throws.
 */
export async function* videoFrames(options: VideoFramesOptions): AsyncGenerator<IncomingFrame> {
  const { source } = options;
  const clock = options.clock ?? Date.now;
  const fps = options.fps ?? 2;
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(options.input);
  const timing = options.timing ?? (isUrl || options.live ? "clock" : "stream");
  const target = isUrl ? redactUrl(options.input) : resolve(options.input);
  const fail = (error: FrameError, extra: { exitCode?: number | null; stderrTail?: string } = {}) =>
    report(options, { type: "failed", source, error, final: true, ...extra });
  let ffmpeg: string;
  try {
    ffmpeg = options.ffmpegPath ?? bundledFfmpegPath();
    checkVideoOptions(fps, options.quality, options.width);
  } catch (error) {
    fail(error as FrameError);
    return;
  }
  if (options.signal?.aborted) {
    report(options, { type: "stopped", source, reason: "aborted", frames: 0 });
    return;
  }
  const child = spawn(ffmpeg, ffmpegArgs(options, fps, isUrl), {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const secret = passwordOf(options.input);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (done) => {
      child.once("error", (error) => done({ code: null, signal: null, error }));
      child.once("close", (code, signal) => done({ code, signal }));
    },
  );
  const abort = () => child.kill("SIGKILL");
  options.signal?.addEventListener("abort", abort, { once: true });
  report(options, { type: "started", source, kind: "video", target, fps, pid: child.pid });
  const splitter = new JpegSplitter(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
  const started = clock();
  let index = 0;
  let frames = 0;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      for (const piece of splitter.push(chunk)) {
        const at = timing === "stream" ? started + Math.round((index * 1_000) / fps) : clock();
        index += 1;
        if (piece.kind === "too-big") {
          report(options, {
            type: "rejected",
            source,
            reason: "too-big",
            bytes: piece.bytes,
            at,
            detail: `a ${piece.bytes}-byte frame from ffmpeg`,
          });
          continue;
        }
        frames += 1;
        yield { data: piece.data, mime: "image/jpeg", at, source };
      }
    }
    const end = await exited;
    const tail = redactText(stderr, secret).trim();
    if (options.signal?.aborted) {
      report(options, { type: "stopped", source, reason: "aborted", frames });
    } else if (end.error) {
      const missing = (end.error as NodeJS.ErrnoException).code === "ENOENT";
      fail(
        new FrameError(
          missing ? "frame.ffmpeg-missing" : "frame.ffmpeg-failed",
          `ffmpeg could not be started (${ffmpeg}): ${end.error.message}`,
          {
            cause: end.error,
            hint: missing
              ? "Reinstall with npm ci, or pass ffmpegPath"
              : "Check that the ffmpeg binary can run on this machine",
          },
        ),
      );
    } else if (end.code === 0) {
      report(options, { type: "stopped", source, reason: "ended", frames });
    } else {
      const how = end.signal ? `was killed (${end.signal})` : `exited with code ${end.code}`;
      fail(
        new FrameError(
          "frame.ffmpeg-failed",
          `ffmpeg reading ${target} ${how} after ${frames} frames${tail ? `: ${lastLines(tail)}` : ""}`,
          {
            retryable: true,
            hint: isUrl
              ? "Check that the stream is reachable and live; restart the source to try again"
              : "Check that the file is a readable video; restart the source to try again",
          },
        ),
        { exitCode: end.code, stderrTail: tail },
      );
    }
  } finally {
    options.signal?.removeEventListener("abort", abort);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

function ffmpegArgs(options: VideoFramesOptions, fps: number, isUrl: boolean): string[] {
  const filters = [`fps=${fps}`];
  if (options.width !== undefined) filters.push(`scale=${options.width}:-2`);
  return [
    "-hide_banner",
    "-nostdin",
    "-loglevel",
    "error",
    ...(options.live ? ["-re"] : []),
    "-i",
    isUrl ? options.input : resolve(options.input),
    "-an",
    "-vf",
    filters.join(","),
    "-f",
    "image2pipe",
    "-c:v",
    "mjpeg",
    "-q:v",
    String(options.quality ?? 5),
    "pipe:1",
  ];
}

function checkVideoOptions(
  fps: number,
  quality: number | undefined,
  width: number | undefined,
): void {
  const bad = (field: string, accepted: string) =>
    new FrameError("frame.bad-option", `${field} must be ${accepted}`, {
      hint: `Set ${field} to ${accepted}`,
      details: { field },
    });
  if (!(fps > 0 && fps <= 60)) throw bad("fps", "a number above 0 and at most 60");
  if (quality !== undefined && !(Number.isInteger(quality) && quality >= 2 && quality <= 31))
    throw bad("quality", "a whole number from 2 to 31");
  if (width !== undefined && !(Number.isInteger(width) && width >= 16 && width <= 8_192))
    throw bad("width", "a whole number of pixels from 16 to 8192");
}

function passwordOf(input: string): string | undefined {
  try {
    const password = new URL(input).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}

function redactText(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join("***").split(encodeURIComponent(secret)).join("***");
}

function lastLines(text: string): string {
  return text.split("\n").slice(-3).join(" | ").slice(-600);
}
