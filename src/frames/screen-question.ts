/**
 * The English phrases that ask about the watched screen: a user turn matching one gets the
 * current frame attached (seed 002's re-attach). Each is matched as whole words, case-insensitive,
 * with any run of spaces and an optional apostrophe (`whats on screen`, `what's on the screen`).
 */
export const SCREEN_QUESTION_PATTERNS: readonly RegExp[] = [
  /\bwhat'?s\s+on\s+(?:the\s+|my\s+|your\s+)?screen\b/i,
  /\bwhat\s+is\s+on\s+(?:the\s+|my\s+|your\s+)?screen\b/i,
  /\bwhat\s+(?:do|can)\s+you\s+see\b/i,
  /\bcan\s+you\s+see\b/i,
  /\bdo\s+you\s+see\b/i,
  /\blook\s+at\b/i,
  /\bon\s+(?:my|the|your)\s+screen\b/i,
  /\btake\s+a\s+look\b/i,
  /\bwhat\s+am\s+i\s+looking\s+at\b/i,
  /\bwhat'?s\s+(?:happening|going\s+on)\s+(?:on\s+(?:the\s+|my\s+)?screen|in\s+the\s+(?:game|video|stream))\b/i,
  /\bdescribe\s+(?:the|my|this)\s+(?:screen|frame|image|picture)\b/i,
];

/**
 * True when `text` asks about the screen (one of `SCREEN_QUESTION_PATTERNS` matches). Plain
 * mentions that ask nothing of the image ("I looked into it", "screenshot the bug later") do not
 * match. Pure.
 */
export function isScreenQuestion(text: string): boolean {
  const normalized = text.replace(/[’‘]/g, "'");
  return SCREEN_QUESTION_PATTERNS.some((pattern) => pattern.test(normalized));
}
