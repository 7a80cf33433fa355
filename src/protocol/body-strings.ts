/**
 * Follows the JSON strings of an action body as it streams in, so that the parser can tell a
 * `</action>` that ends the body from one that is a character of a string (a model writing an
 * HTML file through `fs.write`). Pure: the state is one small number kept by the caller, and
 * every function decides from the text it is given and that state only, so any chunking of a
 * body gives the same answers.
 *
 * The rule (docs/protocol.md, "The action body"): a body whose first non-whitespace character is
 * `{` or `[` is followed as JSON, strings and their `\"` and `\\` escapes included; a `<` inside
 * a string is never a tag. A JSON string cannot hold a raw line break, so a string that reaches
 * one is broken: from there, as in a body that does not start with `{` or `[`, nothing is
 * followed any more and the first `</action>` ends the body wherever it stands. A forgotten
 * closing quote therefore costs at most the rest of its line, never the rest of the output.
 */

/** Only whitespace so far: the next character decides whether the body is followed as JSON. */
export const BODY_START = 0;
/** In a JSON body, outside every string. */
export const BODY_JSON = 1;
/** Inside a JSON string. */
export const BODY_STRING = 2;
/** Inside a JSON string, just after a backslash: the next character is escaped. */
export const BODY_ESCAPE = 3;
/** Not followed: the body is not JSON, or one of its strings broke at a raw line break. */
export const BODY_RAW = 4;

/** Where a body's reading stands: one of the `BODY_*` values. */
export type BodyLexState = number;

/** Whether the state is inside a string (so that the end of the output cut a string short). */
export const insideString = (state: BodyLexState): boolean =>
  state === BODY_STRING || state === BODY_ESCAPE;

/** What keeps a body's reading between pushes (the open action). */
export interface BodyLexer {
  lex: BodyLexState;
}

/**
 * Reads `s` from `from`, starting in `body.lex`, up to the first `<` that stands outside a
 * string, and returns its index (-1: none; then all of `s` is read). `body.lex` is left as it
 * stands after the text read. The `<` itself is read (it can only decide a body at its start to
 * be raw), so a caller that resumes after it passes `index + 1`, and one that resumes at it
 * again (a tag held back for the next push) gets the same answer.
 */
export function nextBodyTag(s: string, from: number, body: BodyLexer): number {
  let st = body.lex;
  const n = s.length;
  for (let k = from; k < n; k++) {
    if (st === BODY_RAW) {
      body.lex = st;
      return s.indexOf("<", k);
    }
    const c = s.charCodeAt(k);
    switch (st) {
      case BODY_START:
        if (c === 32 || (c >= 9 && c <= 13)) break;
        if (c === 123 || c === 91) st = BODY_JSON;
        else {
          st = BODY_RAW;
          if (c === 60) {
            body.lex = st;
            return k;
          }
        }
        break;
      case BODY_JSON:
        if (c === 34) st = BODY_STRING;
        else if (c === 60) {
          body.lex = st;
          return k;
        }
        break;
      case BODY_STRING:
        if (c === 34) st = BODY_JSON;
        else if (c === 92) st = BODY_ESCAPE;
        else if (c === 10 || c === 13) st = BODY_RAW;
        break;
      default:
        // BODY_ESCAPE: the escaped character is taken whatever it is, unless it breaks the line.
        st = c === 10 || c === 13 ? BODY_RAW : BODY_STRING;
        break;
    }
  }
  body.lex = st;
  return -1;
}
