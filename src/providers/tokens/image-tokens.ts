/** An image's size in pixels, when it is known. */
export interface ImageSize {
  readonly width?: number;
  readonly height?: number;
}

/** Anthropic's limits: it scales an image down to fit both before counting. */
export const ANTHROPIC_MAX_EDGE = 1568;
export const ANTHROPIC_MAX_PIXELS = 1_150_000;
/** Pixels per token on Anthropic: tokens = width × height / 750. */
export const ANTHROPIC_PIXELS_PER_TOKEN = 750;

/**
 * Tokens Anthropic counts for a `width` × `height` image: scaled down (aspect kept) until the long
 * edge is at most 1568 px and the area at most 1.15 megapixels, then width × height / 750,
 * rounded up. Pure.
 */
export function anthropicImageTokens(width: number, height: number): number {
  const scale = Math.min(
    1,
    ANTHROPIC_MAX_EDGE / Math.max(width, height),
    Math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)),
  );
  const w = Math.max(1, Math.floor(width * scale));
  const h = Math.max(1, Math.floor(height * scale));
  return Math.ceil((w * h) / ANTHROPIC_PIXELS_PER_TOKEN);
}

/** OpenAI's image detail levels. */
export type OpenAIDetail = "low" | "high";

/**
 * Tokens OpenAI's GPT-4o-class models count for a `width` × `height` image: 85 for `low` detail;
 * for `high` (and `auto` on a large image), scaled to fit 2048 × 2048, then so the short side is at
 * most 768 px, then 85 + 170 per 512-px tile. Pure.
 */
export function openaiImageTokens(
  width: number,
  height: number,
  detail: OpenAIDetail = "high",
): number {
  if (detail === "low") return 85;
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(w, h);
  if (short > 768) {
    w = (w * 768) / short;
    h = (h * 768) / short;
  }
  const tiles = Math.ceil(Math.floor(w) / 512) * Math.ceil(Math.floor(h) / 512);
  return 85 + 170 * tiles;
}

/**
 * Tokens Google's Gemini models count: 258 for an image whose sides are both at most 384 px, else
 * 258 per 768-px tile. Pure.
 */
export function geminiImageTokens(width: number, height: number): number {
  if (width <= 384 && height <= 384) return 258;
  return 258 * Math.ceil(width / 768) * Math.ceil(height / 768);
}

/**
 * The tokens an image costs on a model of `maker` (the catalogue's `provider`: `anthropic`,
 * `openai`, `google`): that maker's formula when the image's size is known, else `fallback` (the
 * flat `IMAGE_TOKENS`). Other makers, and unknown models, count by Anthropic's formula: the
 * highest of the three for a screenshot-sized image. Pure.
 */
export function imageTokens(maker: string | undefined, size: ImageSize, fallback: number): number {
  const { width, height } = size;
  if (!width || !height || width <= 0 || height <= 0) return fallback;
  if (maker === "openai") return openaiImageTokens(width, height);
  if (maker === "google") return geminiImageTokens(width, height);
  return anthropicImageTokens(width, height);
}
