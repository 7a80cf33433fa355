import { createHash } from "node:crypto";
import {
  type ChangeRules,
  type ChangeState,
  checkChangeRules,
  DEFAULT_CHANGE_RULES,
  decideChange,
  initialChangeState,
  meanAbsoluteDifference,
  notedChange,
} from "./change-rules.js";
import { definedOnly } from "./defined-only.js";
import { FrameError } from "./frame-error.js";
import {
  DEFAULT_THUMBNAIL,
  decodeThumbnail,
  imageSize,
  type ThumbnailSize,
} from "./frame-thumbnail.js";
import type { FrameRef, IncomingFrame, ScoredFrame } from "./frame-types.js";
import { readImageHeader } from "./image-header.js";

/** Options of a `ChangeScorer`: the rules (see `DEFAULT_CHANGE_RULES`) and the thumbnail size. */
export interface ChangeScorerOptions extends Partial<ChangeRules> {
  thumbnail?: ThumbnailSize;
  /** How many recent frames `noted` can name (their thumbnails are kept; default 64). */
  recent?: number;
}

/** A frame the scorer has seen: its thumbnail and size, and its bytes while it is noted or previous. */
interface SeenFrame {
  hash: string;
  pixels: Uint8Array;
  width: number;
  height: number;
  data?: Buffer;
}

/**
 * Scores frames against the last NOTED frame (not the previous one: slow changes add up until
 * the consumer looks), with the pure rules of `decideChange` over sharp thumbnails.
 *
 * Contract: `score` hashes the bytes (sha256, the artifact hash) while libvips decodes the
 * thumbnail; an exact duplicate of the last noted frame scores 0 without decoding, and one of the
 * previous frame reuses its thumbnail. Before anything is noted, every score is 1 and `forced`.
 * Frames are scored one at a time, in order (await each `score`). `noted` names a frame among
 * the last `recent` scored; bad bytes reject with `frame.empty`, `frame.unsupported` or
 * `frame.undecodable` and leave the scorer as it was.
 */
export class ChangeScorer {
  readonly rules: ChangeRules;
  readonly thumbnail: ThumbnailSize;
  readonly #recentLimit: number;
  readonly #recent = new Map<string, SeenFrame>();
  #state: ChangeState = initialChangeState();
  #noted: SeenFrame | undefined;
  #previous: SeenFrame | undefined;

  constructor(options: ChangeScorerOptions = {}) {
    const { thumbnail, recent, ...rules } = options;
    this.rules = checkChangeRules({ ...DEFAULT_CHANGE_RULES, ...definedOnly(rules) });
    this.thumbnail = thumbnail ?? DEFAULT_THUMBNAIL;
    const { width, height } = this.thumbnail;
    if (
      !(
        Number.isInteger(width) &&
        Number.isInteger(height) &&
        width >= 4 &&
        height >= 4 &&
        width * height <= 65_536
      )
    ) {
      throw new FrameError(
        "frame.bad-option",
        `thumbnail ${width}×${height} is not a usable size`,
        {
          hint: "Use whole numbers of at least 4 pixels each and at most 65,536 pixels in all, e.g. 64×36",
        },
      );
    }
    this.#recentLimit = Math.max(1, recent ?? 64);
  }

  /** The hash of the last noted frame, or undefined before the first note. */
  get notedHash(): string | undefined {
    return this.#noted?.hash;
  }

  /** Scores one frame; see the class contract. */
  async score(frame: IncomingFrame): Promise<ScoredFrame> {
    const seen = await this.#see(frame);
    const duplicate = this.#noted?.hash === seen.hash;
    const score =
      this.#noted === undefined ? 1 : duplicate ? 0 : this.#difference(this.#noted, seen);
    const motion =
      this.#previous === undefined ? undefined : this.#difference(this.#previous, seen);
    const verdict = decideChange(
      this.#state,
      { score, motion, at: frame.at, duplicate },
      this.rules,
    );
    this.#state = verdict.state;
    this.#previous = seen;
    this.#remember({ ...seen, data: undefined });
    const ref: FrameRef = {
      hash: seen.hash,
      mime: frame.mime,
      bytes: frame.data.length,
      width: seen.width,
      height: seen.height,
      at: frame.at,
      source: frame.source,
    };
    return {
      frame: ref,
      change: {
        score,
        ema: verdict.ema,
        sceneCut: verdict.sceneCut,
        duplicate,
        forced: verdict.forced,
        motion: motion ?? 0,
      },
    };
  }

  /**
   * Makes `frame` the one later frames are scored against, and restarts the skip interval from
   * its capture time. `data`, the frame's bytes, lets an exact duplicate be told by comparing
   * bytes (no hashing either). Throws `frame.not-recent` for a frame not among the last `recent`
   * scored.
   */
  noted(frame: Pick<FrameRef, "hash" | "at">, data?: Buffer): void {
    const seen =
      this.#previous?.hash === frame.hash ? this.#previous : this.#recent.get(frame.hash);
    if (!seen) {
      throw new FrameError(
        "frame.not-recent",
        `frame ${frame.hash.slice(0, 12)} is not among the last ${this.#recentLimit} scored frames`,
        { hint: "Note a frame soon after it was scored, or raise the scorer's `recent` option" },
      );
    }
    this.#noted = seen.data || !data ? seen : { ...seen, data };
    this.#state = notedChange(this.#state, frame.at);
  }

  #difference(a: SeenFrame, b: SeenFrame): number {
    return a.hash === b.hash ? 0 : meanAbsoluteDifference(a.pixels, b.pixels);
  }

  async #see(frame: IncomingFrame): Promise<SeenFrame> {
    const data = frame.data;
    if (data.length === 0) {
      throw new FrameError("frame.empty", `frame from ${frame.source} is empty (0 bytes)`, {
        hint: "The source produced no image; check it is still capturing",
      });
    }
    const header = readImageHeader(data);
    if (!header) {
      throw new FrameError(
        "frame.unsupported",
        `frame from ${frame.source} (${data.length} bytes) is not a JPEG, PNG or WebP image`,
        { hint: "Send JPEG, PNG or WebP frames" },
      );
    }
    // An exact duplicate of the noted or previous frame is told by comparing bytes (lengths
    // first), before any hashing or decoding. Otherwise decoding starts first (libvips works off
    // the main thread) and the sha256 is taken meanwhile.
    const noted = this.#noted;
    if (noted?.data?.equals(data)) return noted;
    if (this.#previous?.data?.equals(data)) return this.#previous;
    let hash: string | undefined;
    if (noted && !noted.data) {
      hash = sha256(data);
      if (hash === noted.hash) return noted;
    }
    const decoding = decodeThumbnail(data, this.thumbnail);
    decoding.catch(() => undefined);
    hash ??= sha256(data);
    const size =
      header.width !== undefined && header.height !== undefined
        ? { width: header.width, height: header.height }
        : await imageSize(data);
    return { hash, pixels: await decoding, ...size, data };
  }

  #remember(seen: SeenFrame): void {
    this.#recent.delete(seen.hash);
    this.#recent.set(seen.hash, seen);
    if (this.#recent.size > this.#recentLimit) {
      const oldest = this.#recent.keys().next().value as string;
      this.#recent.delete(oldest);
    }
  }
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
