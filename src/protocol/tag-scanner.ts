import { type PendingTag, readOpenTag, startOpenTag } from "./open-tag-reader.js";
import {
  emptyTag,
  fillTag,
  isSpace,
  MAX_TAG_LENGTH,
  NEED_MORE,
  NO_ATTRIBUTES,
  NOT_A_TAG,
  type Recognition,
  type ScannedTag,
  tagDefByFirstLetter,
} from "./scanned-tag.js";

/**
 * Decides what a `<` starts. Keeps the reading of an open tag that a push cut short, so that
 * the next push resumes it instead of reading the tag again from its start.
 */
export class TagScanner {
  private pending: PendingTag | undefined;
  /** The one result object, filled anew by every `scan` that finds a tag. */
  private readonly result = emptyTag();

  /**
   * Decides what the `<` at `lt` of `s` starts, in a state that recognises `rec`.
   *
   * A close tag is exactly `</name>` (whitespace allowed before `>`); anything else is text. An
   * open tag is committed as soon as its name is followed by whitespace, `>` or `/`; its
   * attributes (`name="v"`, `name='v'`, `name=v`, any order, names case-insensitive) run to the
   * first `>` outside quotes. Where the text stops following that grammar the tag ends after the
   * last complete attribute and the deviation is reported. Returns `NEED_MORE` when `s` ends
   * before the answer is known (never when `atEnd`: then an unfinished candidate is text and an
   * unfinished open tag is `cutOff`); the caller must then pass the text from `lt` on, followed
   * by more input, as the next `s` (with the tag at index 0). The answer depends only on the text
   * from `lt` on, which keeps the parser split-invariant.
   */
  scan(
    s: string,
    lt: number,
    rec: Recognition,
    atEnd: boolean,
  ): ScannedTag | typeof NEED_MORE | typeof NOT_A_TAG {
    const pending = this.pending;
    if (pending !== undefined) {
      this.pending = undefined;
      if (lt === 0) return this.read(s, 0, pending, atEnd);
    }
    const n = s.length;
    const undecided = atEnd ? NOT_A_TAG : NEED_MORE;
    let j = lt + 1;
    if (j >= n) return undecided;
    const closing = s.charCodeAt(j) === 47;
    if (closing && ++j >= n) return undecided;
    const found = tagDefByFirstLetter(s.charCodeAt(j));
    if (found === undefined || !rec[closing ? found.closeIndex : found.openIndex]) return NOT_A_TAG;
    const name = found.name;
    for (let k = 1; k < name.length; k++) {
      if (j + k >= n) return undecided;
      const c = s.charCodeAt(j + k);
      const e = name.charCodeAt(k);
      if (c !== e && (c | 0x20) !== e) return NOT_A_TAG;
    }
    j += name.length;
    if (closing) {
      while (j < n && isSpace(s.charCodeAt(j)) && j - lt < MAX_TAG_LENGTH) j++;
      if (j >= n) return undecided;
      if (s.charCodeAt(j) !== 62) return NOT_A_TAG;
      return fillTag(
        this.result,
        found.close,
        found.closeIndex,
        lt,
        j + 1,
        NO_ATTRIBUTES,
        false,
        undefined,
      );
    }
    if (j >= n) return undecided;
    const next = s.charCodeAt(j);
    if (!isSpace(next) && next !== 62 && next !== 47) return NOT_A_TAG;
    return this.read(s, lt, startOpenTag(found, j - lt), atEnd);
  }

  private read(
    s: string,
    lt: number,
    st: PendingTag,
    atEnd: boolean,
  ): ScannedTag | typeof NEED_MORE {
    const result = readOpenTag(this.result, s, lt, st, atEnd);
    if (result === NEED_MORE) this.pending = st;
    return result;
  }
}
