import { readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ChangeWaiter, datasetFiles } from "../sources/index.js";
import { FrameError } from "./frame-error.js";
import { DEFAULT_MAX_FRAME_BYTES, type FrameSourceOptions, report } from "./frame-source.js";
import type { IncomingFrame } from "./frame-types.js";
import { readImageHeader } from "./image-header.js";

/** Options of `directoryFrames`. */
export interface DirectoryFramesOptions extends FrameSourceOptions {
  directory: string;
  /** Keep watching for new files after the last one (default false: end there). */
  watch?: boolean;
  /** While watching, look again at least this often (ms; default 1,000), besides `fs.watch` events. */
  pollMs?: number;
  /** File name endings read (default `.jpg .jpeg .png .webp`, any case). */
  extensions?: readonly string[];
  /** Start after this path (relative to the directory, `/`-separated): where a reader left off. */
  after?: string;
}

const IMAGE_EXTENSIONS = [".jpg", ".jpeg", ".png", ".webp"];

/**
 * The images of a directory (and its subdirectories) as frames, in name order (the dataset
 * source's order: segment by segment, by UTF-16 code units), optionally following new files.
 *
 * Contract: a file larger than `maxFrameBytes` is reported `rejected` `too-big` without being
 * read; an empty one `empty`; one that is not an image `unsupported`. A file that vanishes before
 * it is read is skipped (a non-final `failed`). Files should appear whole (written elsewhere and
 * renamed in): one caught half-written is refused by the scorer as undecodable. A directory that
 * cannot be read gives a final `failed` (`frame.directory-unreadable`). Never throws.
 */
export async function* directoryFrames(
  options: DirectoryFramesOptions,
): AsyncGenerator<IncomingFrame> {
  const { source } = options;
  const directory = resolve(options.directory);
  const clock = options.clock ?? Date.now;
  const limit = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const suffixes = (options.extensions ?? IMAGE_EXTENSIONS).flatMap((suffix) => [
    suffix.toLowerCase(),
    suffix.toUpperCase(),
  ]);
  const signal = options.signal ?? new AbortController().signal;
  const unreadable = (error: unknown) =>
    report(options, {
      type: "failed",
      source,
      final: true,
      error: new FrameError(
        "frame.directory-unreadable",
        `cannot read the frame directory ${directory}: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
          hint: "Check that the directory exists and is readable, then start the source again",
        },
      ),
    });
  try {
    if (!(await stat(directory)).isDirectory()) throw new Error("it is not a directory");
  } catch (error) {
    unreadable(error);
    return;
  }
  report(options, { type: "started", source, kind: "directory", target: directory });
  const waiter = new ChangeWaiter(directory, undefined, signal);
  if (options.watch) waiter.watch();
  let last = options.after;
  let frames = 0;
  try {
    for (;;) {
      try {
        for await (const path of datasetFiles(directory, { extensions: suffixes }, last)) {
          if (signal.aborted) break;
          if (path === last) continue;
          last = path;
          const frame = await readFrame(options, join(directory, path), path, limit, clock);
          if (frame) {
            frames += 1;
            yield frame;
          }
        }
      } catch (error) {
        unreadable(error);
        return;
      }
      if (signal.aborted) break;
      if (!options.watch) {
        report(options, { type: "stopped", source, reason: "ended", frames });
        return;
      }
      await waiter.wait(options.pollMs ?? 1_000);
      if (signal.aborted) break;
    }
    report(options, { type: "stopped", source, reason: "aborted", frames });
  } finally {
    waiter.close();
  }
}

async function readFrame(
  options: DirectoryFramesOptions,
  file: string,
  name: string,
  limit: number,
  clock: () => number,
): Promise<IncomingFrame | undefined> {
  const { source } = options;
  const at = clock();
  try {
    const size = (await stat(file)).size;
    if (size > limit) {
      report(options, {
        type: "rejected",
        source,
        reason: "too-big",
        bytes: size,
        at,
        detail: `${name}: ${size} bytes (limit ${limit})`,
      });
      return undefined;
    }
    const data = await readFile(file);
    if (data.length === 0) {
      report(options, {
        type: "rejected",
        source,
        reason: "empty",
        bytes: 0,
        at,
        detail: `${name} is empty`,
      });
      return undefined;
    }
    const header = readImageHeader(data);
    if (!header) {
      report(options, {
        type: "rejected",
        source,
        reason: "unsupported",
        bytes: data.length,
        at,
        detail: `${name} is not a JPEG, PNG or WebP image`,
      });
      return undefined;
    }
    return { data, mime: header.mime, at, source };
  } catch (error) {
    report(options, {
      type: "failed",
      source,
      final: false,
      error: new FrameError(
        "frame.directory-unreadable",
        `skipped ${name}: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
          hint: "The file went away or is not readable; later files are still read",
        },
      ),
    });
    return undefined;
  }
}
