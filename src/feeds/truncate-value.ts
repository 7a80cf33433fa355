import { codePointWeight, estimateTokens } from "./token-estimate.js";

/** A value after the `max_tokens` limit was applied. */
export interface TruncatedValue {
  /** The text to show: unchanged, or a prefix followed by the truncation marker. */
  value: string;
  truncated: boolean;
  /** `estimateTokens(value)`: what the shown text (marker included) costs. */
  tokens: number;
  /** `estimateTokens` of the whole original text. */
  originalTokens: number;
}

const numbers = new Intl.NumberFormat("en-US");
const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });
/** How far back from the cut a grapheme boundary is looked for before falling back to code points. */
const GRAPHEME_WINDOW = 64;

/** The marker appended to a truncated value: `… [truncated: 1,234 of 5,678 tokens]`. */
export function truncationMarker(keptTokens: number, totalTokens: number): string {
  return `… [truncated: ${numbers.format(keptTokens)} of ${numbers.format(totalTokens)} tokens]`;
}

/**
 * Cuts `text` to at most `maxTokens` estimated tokens (see `estimateTokens`) and appends a
 * visible marker on its own line: `\n… [truncated: <kept> of <total> tokens]`.
 *
 * Guarantees: the kept prefix costs at most `maxTokens` (the marker, about 10 tokens, comes on
 * top); the cut never splits a surrogate pair, and falls on a grapheme-cluster boundary (so an
 * emoji sequence or a letter with its accents stays whole) unless a single cluster is longer
 * than 64 code units; text within the limit, or with no limit, comes back unchanged. Never throws.
 */
export function truncateToTokens(text: string, maxTokens: number | undefined): TruncatedValue {
  const originalTokens = estimateTokens(text);
  if (maxTokens === undefined || originalTokens <= maxTokens) {
    return { value: text, truncated: false, tokens: originalTokens, originalTokens };
  }
  const budget = Math.max(0, Math.floor(maxTokens)) * 4;
  let quarters = 0;
  let cut = 0;
  while (cut < text.length) {
    const weight = codePointWeight(text, cut);
    if (quarters + weight.quarters > budget) break;
    quarters += weight.quarters;
    cut += weight.units;
  }
  cut = graphemeBoundaryAtOrBefore(text, cut);
  const kept = text.slice(0, cut);
  const keptTokens = estimateTokens(kept);
  const marker = truncationMarker(keptTokens, originalTokens);
  const value = kept.length === 0 ? marker : `${kept}\n${marker}`;
  return { value, truncated: true, tokens: estimateTokens(value), originalTokens };
}

/** The last grapheme boundary at or before `cut` (itself a code point boundary). */
function graphemeBoundaryAtOrBefore(text: string, cut: number): number {
  if (cut === 0 || cut >= text.length) return cut;
  let start = Math.max(0, cut - GRAPHEME_WINDOW);
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start -= 1;
  const end = Math.min(text.length, cut + GRAPHEME_WINDOW);
  let boundary = start;
  for (const segment of graphemes.segment(text.slice(start, end))) {
    const at = start + segment.index;
    if (at > cut) break;
    boundary = at;
  }
  // A cluster longer than the window: its start is unknown, so keep the code point cut.
  return boundary === start && start > 0 ? cut : boundary;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
