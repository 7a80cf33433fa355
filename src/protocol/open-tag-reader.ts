import {
  describeFound,
  fillTag,
  isHighSurrogate,
  isSpace,
  MAX_TAG_LENGTH,
  NEED_MORE,
  type RawAttribute,
  type ScannedTag,
  type TagDef,
  type TagDeviation,
} from "./scanned-tag.js";

const isNameStart = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58;
const isNameChar = (c: number) => isNameStart(c) || (c >= 48 && c <= 57) || c === 45 || c === 46;
/** Characters of an unquoted value: anything but space, quotes, `<`, `>`, `=`, backtick, `/`. */
const isBareValueChar = (c: number) =>
  !isSpace(c) && c !== 34 && c !== 39 && c !== 60 && c !== 62 && c !== 61 && c !== 96 && c !== 47;

/** Where the reader of an open tag is (numbers, so the hot loop compares small integers). */
const BETWEEN = 0;
const NAME = 1;
const AFTER_NAME = 2;
const BEFORE_VALUE = 3;
const QUOTED = 4;
const BARE = 5;
const SLASH = 6;
type Mode = 0 | 1 | 2 | 3 | 4 | 5 | 6;

const EXPECTED: readonly string[] = [
  'an attribute (name="value"), ">" or "/>"',
  'an attribute name, "=" or ">"',
  '"=" and a quoted value',
  "a quoted value",
  "the closing quote",
  'whitespace or ">" after the value',
  '">" after "/"',
];

/** The reading of an open tag: where it is, so that a cut-short reading can go on. */
export interface PendingTag {
  def: TagDef;
  mode: Mode;
  /** Next index to read. */
  i: number;
  /** Where the tag ends if the grammar breaks: after the last complete attribute. */
  good: number;
  nameStart: number;
  name: string;
  valueStart: number;
  quote: number;
  attrs: RawAttribute[];
}

/**
 * Reads the attributes of the open tag whose `<` is at `lt` of `s`, from `st.i` on, into `target`.
 * Returns `NEED_MORE` when `s` ends first (not `atEnd`), with `st` updated so that the reading can
 * go on from index 0 of a text that starts with the same tag; see `TagScanner.scan` for the rules.
 */
export function readOpenTag(
  target: ScannedTag,
  s: string,
  lt: number,
  st: PendingTag,
  atEnd: boolean,
): ScannedTag | typeof NEED_MORE {
  const n = s.length - lt;
  const attrs = st.attrs;
  let { mode, good, nameStart, name, valueStart, quote } = st;
  for (let i = st.i; ; i++) {
    if (i >= MAX_TAG_LENGTH) {
      return finish(target, lt, st.def, attrs, good, false, {
        at: i,
        expected: `">" within ${MAX_TAG_LENGTH} characters of "<"`,
        found: `${MAX_TAG_LENGTH} characters without one`,
      });
    }
    // A high surrogate as the last character waits for its pair: an error that quotes what was
    // found must quote the whole character, however the output was split.
    if (i >= n || (i + 1 === n && !atEnd && isHighSurrogate(s.charCodeAt(lt + i)))) {
      if (atEnd) return { ...finish(target, lt, st.def, attrs, n, false, undefined), cutOff: true };
      st.mode = mode;
      st.i = i;
      st.good = good;
      st.nameStart = nameStart;
      st.name = name;
      st.valueStart = valueStart;
      st.quote = quote;
      return NEED_MORE;
    }
    const c = s.charCodeAt(lt + i);
    switch (mode) {
      case BETWEEN:
        if (isSpace(c)) continue;
        if (c === 62) return finish(target, lt, st.def, attrs, i + 1, false, undefined);
        if (c === 47) mode = SLASH;
        else if (isNameStart(c)) {
          nameStart = i;
          mode = NAME;
        } else return deviation(target, s, lt, st.def, attrs, good, mode, i);
        continue;
      case NAME:
        if (isNameChar(c)) continue;
        name = s.slice(lt + nameStart, lt + i).toLowerCase();
        valueStart = i;
        mode = AFTER_NAME;
        i--;
        continue;
      case AFTER_NAME:
        if (isSpace(c)) continue;
        if (c === 61) {
          mode = BEFORE_VALUE;
          continue;
        }
        if (c === 62) {
          attrs.push(attribute(name, undefined, nameStart, valueStart, false));
          return finish(target, lt, st.def, attrs, i + 1, false, undefined);
        }
        if (c === 47) {
          attrs.push(attribute(name, undefined, nameStart, valueStart, false));
          good = i;
          mode = SLASH;
          continue;
        }
        return deviation(target, s, lt, st.def, attrs, good, mode, i);
      case BEFORE_VALUE:
        if (isSpace(c)) continue;
        valueStart = i;
        if (c === 34 || c === 39) {
          quote = c;
          valueStart = i + 1;
          mode = QUOTED;
        } else if (c === 62) {
          attrs.push(attribute(name, "", nameStart, valueStart, false));
          return finish(target, lt, st.def, attrs, i + 1, false, undefined);
        } else if (isBareValueChar(c)) mode = BARE;
        else return deviation(target, s, lt, st.def, attrs, good, mode, i);
        continue;
      case QUOTED:
        if (c === quote) {
          attrs.push(
            attribute(name, s.slice(lt + valueStart, lt + i), nameStart, valueStart, false),
          );
          good = i + 1;
          mode = BETWEEN;
        } else if (c === 62) {
          attrs.push(
            attribute(name, s.slice(lt + valueStart, lt + i), nameStart, valueStart, true),
          );
          return finish(target, lt, st.def, attrs, i + 1, false, undefined);
        } else if (c === 10 || c === 13 || c === 60)
          return deviation(target, s, lt, st.def, attrs, good, mode, i);
        continue;
      case BARE:
        if (isBareValueChar(c)) continue;
        attrs.push(attribute(name, s.slice(lt + valueStart, lt + i), nameStart, valueStart, false));
        good = i;
        if (c === 62) return finish(target, lt, st.def, attrs, i + 1, false, undefined);
        if (isSpace(c)) mode = BETWEEN;
        else if (c === 47) mode = SLASH;
        else return deviation(target, s, lt, st.def, attrs, good, mode, i);
        continue;
      default:
        if (c === 62) return finish(target, lt, st.def, attrs, i + 1, true, undefined);
        return deviation(target, s, lt, st.def, attrs, good, mode, i);
    }
  }
}

function attribute(
  name: string,
  value: string | undefined,
  at: number,
  valueAt: number,
  unterminated: boolean,
): RawAttribute {
  return { name, value, at, valueAt, unterminated };
}

/** The tag cut short where the grammar broke (at `i`): it ends at `good`. */
function deviation(
  target: ScannedTag,
  s: string,
  lt: number,
  def: TagDef,
  attrs: RawAttribute[],
  good: number,
  mode: Mode,
  i: number,
): ScannedTag {
  return finish(target, lt, def, attrs, good, false, {
    at: i,
    expected: EXPECTED[mode]!,
    found: describeFound(s, lt + i),
  });
}

/** The scanned tag, with every index made relative to `s` again. */
function finish(
  target: ScannedTag,
  lt: number,
  def: TagDef,
  attrs: RawAttribute[],
  end: number,
  selfClosing: boolean,
  deviation: TagDeviation | undefined,
): ScannedTag {
  if (lt !== 0) {
    for (const attr of attrs) {
      attr.at += lt;
      attr.valueAt += lt;
    }
  }
  return fillTag(
    target,
    def.open,
    def.openIndex,
    lt,
    lt + end,
    attrs,
    selfClosing,
    deviation === undefined ? undefined : { ...deviation, at: deviation.at + lt },
  );
}

/** The reading of the open tag `def` whose attributes start `i` characters after its `<`. */
export function startOpenTag(def: TagDef, i: number): PendingTag {
  return {
    def,
    mode: BETWEEN,
    i,
    good: i,
    nameStart: 0,
    name: "",
    valueStart: 0,
    quote: 0,
    attrs: [],
  };
}
