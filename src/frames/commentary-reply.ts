/** The answer a commentary call gives, once parsed. */
export interface CommentaryReply {
  /** The text to show, with every `[[NOTE: …]]` removed; empty when the model said `[SKIP]`. */
  readonly text: string;
  /** The model answered `[SKIP]` (or nothing but notes): nothing is shown. */
  readonly skip: boolean;
  /** The `[[NOTE: …]]` observations, in order, trimmed; each becomes a note. */
  readonly notes: readonly string[];
}

const NOTE = /\[\[\s*NOTE\s*:([\s\S]*?)\]\]/gi;
const SKIP = /\[SKIP\]/i;

/**
 * Parses a commentary answer: `[[NOTE: …]]` blocks become notes and leave the shown text; the
 * answer is a skip when it holds `[SKIP]` or nothing else remains. Pure; never throws.
 */
export function parseCommentaryReply(answer: string): CommentaryReply {
  const notes: string[] = [];
  const rest = answer.replace(NOTE, (_match, note: string) => {
    const text = note.replace(/\s+/g, " ").trim();
    if (text !== "") notes.push(text);
    return "";
  });
  const text = rest
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (SKIP.test(text) || text === "") return { text: "", skip: true, notes };
  return { text, skip: false, notes };
}
