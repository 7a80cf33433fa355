import { createHash, type Hash } from "node:crypto";
import type { SpoolEvent } from "../spec/index.js";
import { ThreadMembership } from "./thread-streams.js";
import { renderTranscriptText } from "./transcript-lines.js";

/** Where a projection starts when it continues an existing transcript file. */
export interface TranscriptResumeState {
  /** Step stream ids the file's `step.started` lines name. */
  steps: Iterable<string>;
  /** sha256 over the file's bytes so far (the projection takes it over and updates it). */
  hash: Hash;
  /** The file's length in bytes. */
  bytes: number;
  /** The file holds every line of the thread with seq ≤ this. */
  position: number;
}

/** Options of `createTranscriptProjection`. */
export interface TranscriptProjectionOptions {
  /**
   * How many past event boundaries `digestUpTo` keeps a digest for (default 0: only the newest;
   * a live sink keeps 1,024). Each costs one `Hash.copy()` when the event is folded.
   */
  digestHistory?: number;
  resume?: TranscriptResumeState;
}

/**
 * A thread's `transcript.jsonl` as a fold over its continuity's events in seq order: the bytes
 * each event adds and a running sha256. No I/O; the same events give the same bytes.
 */
export interface TranscriptProjection {
  readonly thread: string;
  /** The highest seq folded (or passed to `advance`). */
  readonly position: number;
  /** Bytes of the transcript so far. */
  readonly bytes: number;
  /** The seq of the newest event that produced lines (0 when none did). */
  readonly lastLineSeq: number;
  /** Step stream ids known to belong to the thread. */
  readonly steps: ReadonlySet<string>;
  /**
   * Folds `event` and returns the text it adds to the file (`""` when it is not the thread's).
   * Events must come in increasing seq; one at or below `position` is ignored.
   */
  push(event: SpoolEvent): string;
  /** Records that no event up to `seq` remains to be folded (a subscription's up-to-date marker). */
  advance(seq: number): void;
  /** sha256 (hex) of every byte so far. */
  digest(): string;
  /**
   * sha256 (hex) of the bytes of every line with seq ≤ `seq`, for a `seq` up to `position`; or
   * `undefined` when `seq` is older than the boundaries kept (`digestHistory`).
   */
  digestUpTo(seq: number): string | undefined;
}

/** Starts the transcript projection of `thread` (see `TranscriptProjection`). */
export function createTranscriptProjection(
  thread: string,
  options: TranscriptProjectionOptions = {},
): TranscriptProjection {
  return new Projection(thread, options);
}

class Projection implements TranscriptProjection {
  readonly thread: string;
  readonly #membership: ThreadMembership;
  readonly #history: number;
  readonly #hash: Hash;
  #position: number;
  #bytes: number;
  #lastLineSeq: number;
  /** Digests at past boundaries: `#seqs[i]` → the hash after that event's lines, oldest first. */
  #seqs: number[] = [];
  #hashes: Hash[] = [];
  #head = 0;
  /** The boundary just older than the kept ones; `hash` undefined when it is not kept. */
  #base: { seq: number; hash: Hash | undefined };

  constructor(thread: string, options: TranscriptProjectionOptions) {
    this.thread = thread;
    this.#history = Math.max(0, Math.floor(options.digestHistory ?? 0));
    const resume = options.resume;
    this.#membership = new ThreadMembership(thread, resume?.steps);
    this.#hash = resume?.hash ?? createHash("sha256");
    this.#position = resume?.position ?? 0;
    this.#bytes = resume?.bytes ?? 0;
    this.#lastLineSeq = this.#position;
    this.#base = { seq: this.#position, hash: this.#hash.copy() };
  }

  get position(): number {
    return this.#position;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get lastLineSeq(): number {
    return this.#lastLineSeq;
  }

  get steps(): ReadonlySet<string> {
    return this.#membership.steps;
  }

  push(event: SpoolEvent): string {
    if (event.seq <= this.#position) return "";
    this.#position = event.seq;
    if (!this.#membership.accept(event)) return "";
    const text = renderTranscriptText(event);
    this.#hash.update(text, "utf8");
    this.#bytes += Buffer.byteLength(text, "utf8");
    this.#lastLineSeq = event.seq;
    this.#remember(event.seq);
    return text;
  }

  advance(seq: number): void {
    if (seq > this.#position) this.#position = seq;
  }

  digest(): string {
    return this.#hash.copy().digest("hex");
  }

  digestUpTo(seq: number): string | undefined {
    if (seq >= this.#lastLineSeq) return this.digest();
    // The newest kept boundary at or below `seq`: no line lies between it and `seq`.
    let low = this.#head;
    let high = this.#seqs.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (this.#seqs[middle]! <= seq) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    if (found >= 0) return this.#hashes[found]!.copy().digest("hex");
    if (seq >= this.#base.seq && this.#base.hash) return this.#base.hash.copy().digest("hex");
    return undefined;
  }

  #remember(seq: number): void {
    if (this.#history === 0) {
      this.#base = { seq, hash: undefined };
      return;
    }
    this.#seqs.push(seq);
    this.#hashes.push(this.#hash.copy());
    if (this.#seqs.length - this.#head > this.#history) {
      this.#base = { seq: this.#seqs[this.#head]!, hash: this.#hashes[this.#head]! };
      this.#head += 1;
      if (this.#head >= 1024 && this.#head * 2 >= this.#seqs.length) {
        this.#seqs = this.#seqs.slice(this.#head);
        this.#hashes = this.#hashes.slice(this.#head);
        this.#head = 0;
      }
    }
  }
}
