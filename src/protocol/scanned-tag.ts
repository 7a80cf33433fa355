import { INPUT } from "./compiled-table.js";
import type { TagInput } from "./transition-table.js";

/** The protocol's tag names as written (matched case-insensitively). */
export type TagName = "thought" | "action" | "response" | "context_feed";

/** A tag name with the inputs its open and close tags are, and their indexes. */
export interface TagDef {
  readonly name: TagName;
  readonly open: TagInput;
  readonly close: TagInput;
  readonly openIndex: number;
  readonly closeIndex: number;
}

const tagDefOf = (name: TagName, open: TagInput, close: TagInput): TagDef => ({
  name,
  open,
  close,
  openIndex: INPUT[open],
  closeIndex: INPUT[close],
});

const THOUGHT = tagDefOf("thought", "open-thought", "close-thought");
const ACTION = tagDefOf("action", "open-action", "close-action");
const RESPONSE = tagDefOf("response", "open-response", "close-response");
const FEED = tagDefOf("context_feed", "open-feed", "close-feed");

/** The only tag whose name starts with the letter `first` (any case), if there is one. */
export function tagDefByFirstLetter(first: number): TagDef | undefined {
  switch (first | 0x20) {
    case 116:
      return THOUGHT;
    case 97:
      return ACTION;
    case 114:
      return RESPONSE;
    case 99:
      return FEED;
    default:
      return undefined;
  }
}

/** The tag name, by input. */
export const TAG_NAME_OF: { readonly [I in TagInput]: TagName } = {
  "open-thought": "thought",
  "close-thought": "thought",
  "open-action": "action",
  "close-action": "action",
  "open-response": "response",
  "close-response": "response",
  "open-feed": "context_feed",
  "close-feed": "context_feed",
};

/** An open tag longer than this (attributes included) is malformed; a close tag is text. */
export const MAX_TAG_LENGTH = 1024;

/** The scanner cannot decide yet: the rest of the input may make it a tag. */
export const NEED_MORE = -1;
/** The `<` starts no tag recognised in this state: it is content. */
export const NOT_A_TAG = -2;

/** One attribute as written; `name` is lower-cased, `value` undefined when it has none. */
export interface RawAttribute {
  name: string;
  value: string | undefined;
  /** Index of the name and of the value (or of where one was expected) in the scanned text. */
  at: number;
  valueAt: number;
  /** The quoted value ran into `>` before its closing quote. */
  unterminated: boolean;
}

/** Where an open tag stopped following the grammar; the tag ends before the offending text. */
export interface TagDeviation {
  at: number;
  expected: string;
  /** What stood there, described for a message (`"{"`, `a line break`). */
  found: string;
}

/**
 * A recognised protocol tag in the scanned text. The scanner reuses one object for every tag: it
 * is valid until its next `scan` (the parser handles each tag before it scans on).
 */
export interface ScannedTag {
  input: TagInput;
  /** `input`'s index in `INPUT_CLASSES`. */
  index: number;
  /** Index of its `<` and just past its end. */
  start: number;
  end: number;
  attrs: RawAttribute[];
  selfClosing: boolean;
  deviation: TagDeviation | undefined;
  /** The input ended inside this open tag (only when scanning at the end of input). */
  cutOff: boolean;
}

/** Whether a state recognises each input, by index in `INPUT_CLASSES` (see `RECOGNIZED`). */
export type Recognition = readonly boolean[];

/** The attribute list of close tags (they have none); never modified. */
export const NO_ATTRIBUTES: RawAttribute[] = [];

/** A fresh result object for a scanner to reuse. */
export function emptyTag(): ScannedTag {
  return {
    input: "open-thought",
    index: 0,
    start: 0,
    end: 0,
    attrs: NO_ATTRIBUTES,
    selfClosing: false,
    deviation: undefined,
    cutOff: false,
  };
}

/** Fills `target` (the scanner's one result object) and returns it. */
export function fillTag(
  target: ScannedTag,
  input: TagInput,
  index: number,
  start: number,
  end: number,
  attrs: RawAttribute[],
  selfClosing: boolean,
  deviation: TagDeviation | undefined,
): ScannedTag {
  target.input = input;
  target.index = index;
  target.start = start;
  target.end = end;
  target.attrs = attrs;
  target.selfClosing = selfClosing;
  target.deviation = deviation;
  target.cutOff = false;
  return target;
}

/** Space, tab, line feed, vertical tab, form feed, carriage return. */
export const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);

/** Describes the character at `i` of `s` for a message. */
export function describeFound(s: string, i: number): string {
  if (i >= s.length) return "the end of the output";
  const c = s.charCodeAt(i);
  if (c === 10 || c === 13) return "a line break";
  return JSON.stringify(s.slice(i, i + (isHighSurrogate(c) ? 2 : 1)));
}

/** True for the first half of a UTF-16 surrogate pair: a character is not whole until its pair comes. */
export function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
