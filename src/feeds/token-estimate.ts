/**
 * Estimates how many tokens `text` costs a model, without a tokenizer.
 *
 * The rule, per Unicode code point: ASCII weighs 1/4 token (about four characters per token in
 * English and code); U+0080–U+07FF (accented Latin, Greek, Cyrillic, Hebrew, Arabic) 1/2; the
 * rest of the basic plane (CJK, Indic, …) 1; astral code points (emoji, rare CJK) 2. The sum is
 * rounded up. A lone surrogate counts as 1. It errs on the high side for non-English text, which
 * is the safe side for a budget. Linear time; never throws.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(quarterTokens(text, 0, text.length) / 4);
}

/** The weight of the code point at `index` in quarter tokens, and how many UTF-16 units it spans. */
export function codePointWeight(text: string, index: number): { quarters: number; units: number } {
  const code = text.charCodeAt(index);
  if (code < 0x80) return { quarters: 1, units: 1 };
  if (code < 0x800) return { quarters: 2, units: 1 };
  if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
    const next = text.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return { quarters: 8, units: 2 };
  }
  return { quarters: 4, units: 1 };
}

function quarterTokens(text: string, start: number, end: number): number {
  let quarters = 0;
  for (let index = start; index < end; ) {
    const weight = codePointWeight(text, index);
    quarters += weight.quarters;
    index += weight.units;
  }
  return quarters;
}
