/**
 * The change score's cost and the frame pipeline's sustained rate. Per 1080p JPEG: Spool's
 * `ChangeScorer.score` (sha256, the duplicate checks, the thumbnail, the difference and the
 * rules) beside sharp's own decode of the same JPEG to the same 64×36 greyscale thumbnail (the
 * baseline), rotating among six different frames so no exact-duplicate shortcut applies. Then
 * `BENCH_FRAMES` (default 100,000) frames of 640×360 through `watchFrames` (limits, scorer,
 * storage, a consumer noting every 20th frame), with RSS at the start and the end.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import {
  bundledFfmpegPath,
  ChangeScorer,
  DEFAULT_THUMBNAIL,
  type IncomingFrame,
  watchFrames,
} from "../../src/frames/index.js";
import type { EngineSection } from "../report.js";
import { median } from "../stats.js";

const FRAMES = Number(process.env.BENCH_FRAMES ?? 100_000);
const SCORED_PER_RUN = 120;

/** Six different frames of `size` from ffmpeg's test sources, as JPEGs. */
function distinctJpegs(dir: string, size: string): Buffer[] {
  const sources = [
    "testsrc2=rate=1:duration=1",
    "testsrc2=rate=25:duration=2,trim=start_frame=37:end_frame=38",
    "mandelbrot=rate=1",
    "mandelbrot=rate=25,trim=start_frame=40:end_frame=41",
    "smptebars=rate=1:duration=1",
    "life=rate=1:mold=10:ratio=0.4",
  ];
  return sources.map((spec, index) => {
    const path = join(dir, `${size}-${index}.jpg`);
    const [name, rest] = spec.split(/=(.*)/s) as [string, string];
    const [options, ...filters] = rest.split(",");
    execFileSync(bundledFfmpegPath(), [
      "-hide_banner",
      "-loglevel",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      `${name}=size=${size}:${options}`,
      ...(filters.length ? ["-vf", filters.join(",")] : []),
      "-frames:v",
      "1",
      "-q:v",
      "4",
      path,
    ]);
    return readFileSync(path);
  });
}

/** Mean microseconds per frame of `work` over `count` frames in rotation. */
async function perFrame(
  jpegs: Buffer[],
  count: number,
  work: (data: Buffer, index: number) => Promise<unknown>,
): Promise<number> {
  const started = performance.now();
  for (let index = 0; index < count; index++) await work(jpegs[index % jpegs.length]!, index);
  return ((performance.now() - started) * 1000) / count;
}

async function scoreCost(jpegs: Buffer[], runs: number) {
  const { width, height } = DEFAULT_THUMBNAIL;
  const baseline = (data: Buffer) =>
    sharp(data).resize(width, height, { fit: "fill" }).greyscale().raw().toBuffer();
  const scorer = new ChangeScorer();
  const score = async (data: Buffer, index: number) => {
    const scored = await scorer.score({
      data,
      mime: "image/jpeg",
      at: index * 100,
      source: "bench",
    });
    if (index % 20 === 0) scorer.noted(scored.frame, data);
  };
  await perFrame(jpegs, 24, baseline);
  await perFrame(jpegs, 24, score);
  const spool: number[] = [];
  const base: number[] = [];
  // Interleaved, so a busy moment of the shared machine falls on both.
  for (let run = 0; run < runs; run++) {
    base.push(await perFrame(jpegs, SCORED_PER_RUN, baseline));
    spool.push(await perFrame(jpegs, SCORED_PER_RUN, score));
  }
  return { spool: median(spool), baseline: median(base) };
}

async function sustained(jpegs: Buffer[], count: number) {
  async function* frames(): AsyncGenerator<IncomingFrame> {
    for (let index = 0; index < count; index++) {
      yield {
        data: jpegs[index % jpegs.length]!,
        mime: "image/jpeg",
        at: index * 100,
        source: "bench",
      };
    }
  }
  const watch = watchFrames({
    source: "bench",
    open: () => frames(),
    limits: { maxFramesPerMinute: 1_000_000, burst: 1_000 },
    overflow: "wait",
  });
  const mib = () => process.memoryUsage().rss / 2 ** 20;
  let rssStart = 0;
  let seen = 0;
  const started = performance.now();
  for await (const scored of watch) {
    seen += 1;
    if (seen === 1_000) rssStart = mib();
    if (seen % 20 === 0) watch.noted(scored.frame);
  }
  const seconds = (performance.now() - started) / 1000;
  return { rate: seen / seconds, rssStart, rssEnd: mib(), seen };
}

/** The frames table: score cost beside sharp's decode, sustained rate, RSS over the run. */
export async function measureFrameScoring(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-frames-"));
  try {
    const full = distinctJpegs(dir, "1920x1080");
    progress(`frames: score cost per 1080p JPEG (${runs} runs of ${SCORED_PER_RUN})`);
    const cost = await scoreCost(full, Math.max(3, runs));
    const small = distinctJpegs(dir, "640x360");
    progress(`frames: ${FRAMES.toLocaleString("en-US")} frames of 640×360 through watchFrames`);
    const run = await sustained(small, FRAMES);
    const kb = (list: Buffer[]) =>
      Math.round(list.reduce((sum, data) => sum + data.length, 0) / list.length / 1024);
    return {
      title: "Frames: change score and pipeline",
      baseline: "sharp decode",
      rows: [
        {
          measure: "change score per 1080p JPEG",
          unit: "µs",
          spool: cost.spool,
          ceiling: cost.baseline,
          target: { maxRatio: 1.1 },
        },
        {
          measure: `sustained rate, ${run.seen.toLocaleString("en-US")} frames of 640×360`,
          unit: "frames/s",
          spool: run.rate,
        },
        { measure: "RSS after 1,000 frames", unit: "MiB", spool: run.rssStart },
        {
          measure: `RSS after ${run.seen.toLocaleString("en-US")} frames`,
          unit: "MiB",
          spool: run.rssEnd,
          target: { maxValue: run.rssStart + 64 },
        },
      ],
      notes: [
        `Baseline: sharp(jpeg).resize(${DEFAULT_THUMBNAIL.width}, ${DEFAULT_THUMBNAIL.height}, { fit: "fill" }).greyscale().raw(): the same decode (libvips shrink-on-load) to the same thumbnail, without hashing, duplicate checks or rules.`,
        `Six distinct frames in rotation (1080p JPEGs average ${kb(full)} KiB, 640×360 ${kb(small)} KiB), from ffmpeg's testsrc2, mandelbrot, smptebars and life; a consumer notes every 20th frame, so no exact-duplicate shortcut applies.`,
        "RSS target: no more than 64 MiB above its value after the first 1,000 frames.",
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
