import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ArtifactStore } from "../log/index.js";
import { FrameError } from "./frame-error.js";
import type { FrameMime, FrameRef } from "./frame-types.js";

/** Options of a `FrameStorage`. */
export interface FrameStorageOptions {
  /** Where kept frames go (`store.artifacts`); without it `keep` fails with `frame.store-failed`. */
  artifacts?: ArtifactStore;
  /**
   * The folder of the latest-frame files (`<folder>/<source>.jpg`), e.g. `framesFolder(workspace,
   * continuity)`; none are written when absent.
   */
  folder?: string;
  /** Recent frames whose bytes are held for `keep` (default 16). */
  recent?: number;
  /** The latest-frame file is rewritten at most this often (frame time, ms; default 1,000), and for every keyframe. */
  fileIntervalMs?: number;
}

/** The latest frame of a source, bytes included. */
export interface LatestFrame {
  frame: FrameRef;
  data: Buffer;
}

const EXTENSIONS: Record<FrameMime, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
};

/** `<workspace>/.spool/frames/<continuity>`: where the latest-frame files of a continuity live. */
export function framesFolder(workspace: string, continuity: string): string {
  return join(workspace, ".spool", "frames", safeName(continuity));
}

/** The latest-frame file of `source` in `folder` for frames of `mime`. */
export function latestFramePath(
  folder: string,
  source: string,
  mime: FrameMime = "image/jpeg",
): string {
  return join(folder, `${safeName(source)}.${EXTENSIONS[mime]}`);
}

function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, "_");
}

/**
 * Frame storage: the frames that matter as content-addressed artifacts, and the latest frame of
 * each source in memory and (optionally) as a file another process can show.
 *
 * Contract: nothing is stored as an artifact unless `keep` is called (a 10 fps stream is not
 * kept whole); `keep` of the same frame twice stores it once (the artifact store deduplicates)
 * and says `first` only the first time. `keep` works for the last `recent` frames `remember` saw; older ones
 * fail with `frame.not-recent`. The latest-frame file is replaced atomically (written beside it,
 * then renamed), so a reader never sees half a frame.
 */
export class FrameStorage {
  readonly folder: string | undefined;
  readonly #artifacts: ArtifactStore | undefined;
  readonly #recentLimit: number;
  readonly #fileIntervalMs: number;
  readonly #recent = new Map<string, Buffer>();
  readonly #latest = new Map<string, LatestFrame>();
  readonly #writtenAt = new Map<string, number>();
  readonly #kept = new Set<string>();
  #folderMade = false;

  constructor(options: FrameStorageOptions = {}) {
    this.#artifacts = options.artifacts;
    this.folder = options.folder;
    this.#recentLimit = Math.max(1, options.recent ?? 16);
    this.#fileIntervalMs = options.fileIntervalMs ?? 1_000;
  }

  /**
   * Makes `frame` its source's latest frame and holds its bytes for `keep`; rewrites the
   * latest-frame file when it is due (a keyframe, or `fileIntervalMs` since the last write).
   * Rejects only when the file cannot be written (`frame.store-failed`).
   */
  async remember(frame: FrameRef, data: Buffer, keyframe = false): Promise<void> {
    this.#recent.delete(frame.hash);
    this.#recent.set(frame.hash, data);
    if (this.#recent.size > this.#recentLimit) {
      this.#recent.delete(this.#recent.keys().next().value as string);
    }
    this.#latest.set(frame.source, { frame, data });
    if (this.folder === undefined) return;
    const writtenAt = this.#writtenAt.get(frame.source);
    if (!keyframe && writtenAt !== undefined && frame.at - writtenAt < this.#fileIntervalMs) return;
    this.#writtenAt.set(frame.source, frame.at);
    await this.#writeLatest(this.folder, frame, data);
  }

  /** The latest frame of `source`, or undefined before its first. */
  latest(source: string): LatestFrame | undefined {
    return this.#latest.get(source);
  }

  /** The bytes of a recent frame, or undefined when they are no longer held. */
  bytes(hash: string): Buffer | undefined {
    return this.#recent.get(hash) ?? this.#latestBytes(hash);
  }

  /**
   * Stores a recent frame as an artifact (see the class contract); `first` is true when this
   * storage had not kept it before.
   */
  async keep(frame: FrameRef): Promise<{ frame: FrameRef; first: boolean }> {
    const data = this.bytes(frame.hash);
    if (!data) {
      throw new FrameError(
        "frame.not-recent",
        `frame ${frame.hash.slice(0, 12)} from ${frame.source} is no longer held (only the last ${this.#recentLimit} are)`,
        { hint: "Keep a frame soon after it arrives, or raise the storage's `recent` option" },
      );
    }
    if (!this.#artifacts) {
      throw new FrameError("frame.store-failed", "this frame storage has no artifact store", {
        hint: "Give FrameStorage the store's artifacts (store.artifacts) to keep frames",
      });
    }
    try {
      const info = await this.#artifacts.put(data, { mediaType: frame.mime });
      if (info.hash !== frame.hash) throw new Error(`stored as ${info.hash}`);
    } catch (error) {
      throw new FrameError(
        "frame.store-failed",
        `frame ${frame.hash.slice(0, 12)} could not be stored: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
          retryable: true,
          hint: "Check the store (spool doctor); keeping it again is safe",
        },
      );
    }
    if (this.#kept.has(frame.hash)) return { frame, first: false };
    this.#kept.add(frame.hash);
    if (this.#kept.size > 4_096) this.#kept.delete(this.#kept.values().next().value as string);
    return { frame, first: true };
  }

  #latestBytes(hash: string): Buffer | undefined {
    for (const latest of this.#latest.values()) if (latest.frame.hash === hash) return latest.data;
    return undefined;
  }

  async #writeLatest(folder: string, frame: FrameRef, data: Buffer): Promise<void> {
    const path = latestFramePath(folder, frame.source, frame.mime);
    const partial = `${path}.${process.pid}.partial`;
    try {
      if (!this.#folderMade) {
        await mkdir(folder, { recursive: true });
        this.#folderMade = true;
      }
      await writeFile(partial, data);
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true }).catch(() => undefined);
      throw new FrameError(
        "frame.store-failed",
        `the latest frame could not be written to ${path}: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
          retryable: true,
          hint: "Check that the folder is writable and the disk has room",
        },
      );
    }
  }
}
