import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";

/** Every code the frames module fails with; each message says what to do next. */
export type FrameErrorCode =
  | "frame.too-big"
  | "frame.empty"
  | "frame.undecodable"
  | "frame.unsupported"
  | "frame.bad-option"
  | "frame.ffmpeg-missing"
  | "frame.ffmpeg-failed"
  | "frame.directory-unreadable"
  | "frame.screencast-failed"
  | "frame.not-recent"
  | "frame.store-failed";

/**
 * A failure of a frame source, a frame, or a frames option.
 *
 * Contract: `code` is one of `FrameErrorCode` and stable; the message names the source, the file
 * or the option involved and says how to fix it. It never holds a password from a stream URL.
 */
export class FrameError extends SpoolError {
  declare readonly code: FrameErrorCode;

  constructor(code: FrameErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}
