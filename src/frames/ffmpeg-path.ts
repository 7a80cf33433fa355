import { createRequire } from "node:module";
import { FrameError } from "./frame-error.js";

/**
 * The path of the ffmpeg binary bundled by `@ffmpeg-installer/ffmpeg` for this platform.
 * Throws `frame.ffmpeg-missing` when the package has no binary for it.
 */
export function bundledFfmpegPath(): string {
  try {
    const require = createRequire(import.meta.url);
    const installer = require("@ffmpeg-installer/ffmpeg") as { path: string };
    return installer.path;
  } catch (error) {
    throw new FrameError(
      "frame.ffmpeg-missing",
      `no bundled ffmpeg for ${process.platform}-${process.arch}`,
      {
        cause: error,
        hint: "Reinstall with npm ci (it installs @ffmpeg-installer's binary for this platform), or pass ffmpegPath",
      },
    );
  }
}
