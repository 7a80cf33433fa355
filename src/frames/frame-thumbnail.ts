import sharp from "sharp";
import { FrameError } from "./frame-error.js";

/** The size of the greyscale thumbnails frames are compared by. */
export interface ThumbnailSize {
  width: number;
  height: number;
}

/**
 * The default thumbnail: 64×36 (16:9), small enough that libvips decodes a JPEG at 1/8 scale
 * (shrink-on-load) and large enough that a line of typed text moves the score.
 */
export const DEFAULT_THUMBNAIL: ThumbnailSize = { width: 64, height: 36 };

/** The most pixels a frame may have (a decompression bomb is refused): 16384 × 16384. */
export const MAX_FRAME_PIXELS = 16_384 * 16_384;

/**
 * Decodes `data` (JPEG, PNG or WebP) straight to a `size` greyscale thumbnail, stretched to fill
 * (`fit: fill`), as raw pixels: `width × height` greyscale bytes, row by row. Resizing a JPEG this far lets libvips decode it at 1/2, 1/4 or
 * 1/8 scale, so this costs what sharp's own decode to a thumbnail costs. Rejects with
 * `frame.undecodable` (truncated or corrupt data; sharp's warnings count) naming the cause.
 */
export async function decodeThumbnail(data: Buffer, size: ThumbnailSize): Promise<Uint8Array> {
  try {
    const image = sharp(data, { limitInputPixels: MAX_FRAME_PIXELS, failOn: "warning" });
    const { data: pixels, info } = await image
      .resize(size.width, size.height, { fit: "fill" })
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 1 || pixels.length !== size.width * size.height) {
      throw new Error(`sharp gave ${info.channels} channels of ${info.width}×${info.height}`);
    }
    return pixels;
  } catch (error) {
    throw undecodable(data, error);
  }
}

/** The image's width and height as its header says, decoding nothing. */
export async function imageSize(data: Buffer): Promise<{ width: number; height: number }> {
  try {
    const { width, height } = await sharp(data, { limitInputPixels: MAX_FRAME_PIXELS }).metadata();
    return { width: width ?? 0, height: height ?? 0 };
  } catch (error) {
    throw undecodable(data, error);
  }
}

function undecodable(data: Buffer, error: unknown): FrameError {
  return new FrameError(
    "frame.undecodable",
    `the frame (${data.length} bytes) could not be decoded: ${firstLine(error)}`,
    {
      cause: error,
      hint: "The image is truncated or corrupt; check what the source produces",
    },
  );
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n")[0] ?? "").slice(0, 300);
}
