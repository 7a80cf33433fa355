import type { FrameError } from "./frame-error.js";

/** The kinds of frame source. */
export type FrameSourceKind = "screencast" | "video" | "directory" | "push";

/**
 * What a frame source reports beside its frames. `started` comes first; exactly one of `stopped`
 * or a `failed` with `final` comes last. A `failed` without `final` is a problem it got past (a
 * file it could not read); `rejected` is a frame it refused without yielding it.
 */
export type FrameSourceEvent =
  | {
      type: "started";
      source: string;
      kind: FrameSourceKind;
      /** What it reads, for people: a path, a URL with any password removed, a tab. */
      target: string;
      fps?: number;
      /** The child process's id, for a source that runs one (ffmpeg). */
      pid?: number;
    }
  | { type: "stopped"; source: string; reason: "ended" | "aborted"; frames: number }
  | {
      type: "failed";
      source: string;
      error: FrameError;
      final: boolean;
      exitCode?: number | null;
      stderrTail?: string;
    }
  | {
      type: "rejected";
      source: string;
      reason: "too-big" | "empty" | "undecodable" | "unsupported";
      bytes: number;
      at: number;
      detail?: string;
    };

/** Options every frame source takes. */
export interface FrameSourceOptions {
  /** The source's id, carried by each frame (`screen`, `tab:t1`, `video`). */
  source: string;
  /** Stops the source: the iteration ends with a `stopped` `aborted` event, resources released. */
  signal?: AbortSignal;
  /** Receives the source's status events. Called synchronously; must not throw. */
  onEvent?: (event: FrameSourceEvent) => void;
  /** Epoch milliseconds (default `Date.now`): frame times come from it. */
  clock?: () => number;
  /**
   * Frames larger than this are refused (a `rejected` `too-big` event) and never held whole in
   * memory (default `DEFAULT_MAX_FRAME_BYTES`).
   */
  maxFrameBytes?: number;
}

/** The default `maxFrameBytes`: 8 MiB, far above a 4K JPEG. */
export const DEFAULT_MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** Reports `event` to the source's listener, if any. */
export function report(options: FrameSourceOptions, event: FrameSourceEvent): void {
  options.onEvent?.(event);
}
