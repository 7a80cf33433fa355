import { DEFAULT_MAX_FRAME_BYTES, type FrameSourceOptions, report } from "./frame-source.js";
import type { FrameMime, IncomingFrame } from "./frame-types.js";
import { readImageHeader } from "./image-header.js";

/** Options of `pushFrameSource`. */
export interface PushFrameSourceOptions extends Omit<FrameSourceOptions, "signal" | "onEvent"> {
  /** Frames waiting for the reader at most (default 2); when full, the oldest is dropped. */
  buffer?: number;
}

/** What `pushFrame` did with a frame. */
export type PushResult =
  | { accepted: true }
  | { accepted: false; reason: "too-big" | "empty" | "unsupported" | "ended" };

/** A frame a caller pushes: its bytes, and optionally when it was captured and its encoding. */
export interface PushedFrame {
  data: Buffer;
  /** Default: read from the bytes (JPEG, PNG or WebP). */
  mime?: FrameMime;
  /** Default: the source's clock now. */
  at?: number;
  keyframe?: boolean;
}

/**
 * A frame source a caller feeds (the server's frame upload, a library caller, a test): call
 * `pushFrame` for each frame, `end` when done, and read `frames(...)` once.
 *
 * Contract: `pushFrame` never blocks and never throws: it refuses empty, oversized (more than
 * `maxFrameBytes`) and non-image frames at once (and reports them as `rejected` to the reader's
 * listener), and otherwise queues the frame. The queue holds `buffer` frames; when it is full
 * the OLDEST waiting frame is dropped (counted in `dropped`): the latest frame always wins.
 * After `end` (or the reader's signal) pushes are refused with `ended`.
 */
export class PushFrameSource {
  readonly source: string;
  readonly #options: PushFrameSourceOptions;
  readonly #waiting: IncomingFrame[] = [];
  readonly #buffer: number;
  #ended = false;
  #wake: (() => void) | undefined;
  #listener: FrameSourceOptions["onEvent"];
  /** Frames dropped because the reader fell behind. */
  dropped = 0;
  /** Frames accepted in all. */
  accepted = 0;

  constructor(options: PushFrameSourceOptions) {
    this.#options = options;
    this.source = options.source;
    this.#buffer = Math.max(1, options.buffer ?? 2);
  }

  /** Offers a frame; see the class contract. */
  pushFrame(frame: PushedFrame): PushResult {
    if (this.#ended) return { accepted: false, reason: "ended" };
    const at = frame.at ?? (this.#options.clock ?? Date.now)();
    const bytes = frame.data.length;
    const refuse = (reason: "too-big" | "empty" | "unsupported", detail: string): PushResult => {
      this.#listener?.({ type: "rejected", source: this.source, reason, bytes, at, detail });
      return { accepted: false, reason };
    };
    if (bytes === 0) return refuse("empty", "a pushed frame of 0 bytes");
    const limit = this.#options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (bytes > limit)
      return refuse("too-big", `a pushed frame of ${bytes} bytes (limit ${limit})`);
    const mime = frame.mime ?? readImageHeader(frame.data)?.mime;
    if (!mime) return refuse("unsupported", "a pushed frame that is not a JPEG, PNG or WebP image");
    if (this.#waiting.length >= this.#buffer) {
      this.#waiting.shift();
      this.dropped += 1;
    }
    this.#waiting.push({
      data: frame.data,
      mime,
      at,
      source: this.source,
      ...(frame.keyframe !== undefined ? { keyframe: frame.keyframe } : {}),
    });
    this.accepted += 1;
    this.#wakeReader();
    return { accepted: true };
  }

  /** No more frames: the reader gets what waits, then `stopped` `ended`. */
  end(): void {
    this.#ended = true;
    this.#wakeReader();
  }

  /**
   * The frames, for one reader. `signal` ends it (`stopped` `aborted`, waiting frames dropped);
   * `onEvent` receives `started`, `rejected` and `stopped`.
   */
  async *frames(
    hooks: Pick<FrameSourceOptions, "signal" | "onEvent"> = {},
  ): AsyncGenerator<IncomingFrame> {
    const options = { ...this.#options, ...hooks };
    this.#listener = hooks.onEvent;
    report(options, { type: "started", source: this.source, kind: "push", target: "pushFrame" });
    const onAbort = () => {
      this.#ended = true;
      this.#waiting.length = 0;
      this.#wakeReader();
    };
    hooks.signal?.addEventListener("abort", onAbort, { once: true });
    if (hooks.signal?.aborted) onAbort();
    let frames = 0;
    try {
      for (;;) {
        const next = this.#waiting.shift();
        if (next) {
          frames += 1;
          yield next;
          continue;
        }
        if (this.#ended) break;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      hooks.signal?.removeEventListener("abort", onAbort);
      this.#ended = true;
      this.#waiting.length = 0;
      report(options, {
        type: "stopped",
        source: this.source,
        reason: hooks.signal?.aborted ? "aborted" : "ended",
        frames,
      });
    }
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** A new push source (see `PushFrameSource`). */
export function pushFrameSource(options: PushFrameSourceOptions): PushFrameSource {
  return new PushFrameSource(options);
}
