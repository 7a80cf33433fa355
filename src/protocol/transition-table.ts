import type { ProtocolErrorCode } from "./protocol-event.js";

/**
 * Where the parser is between two inputs. `top` is outside every block with no text block open
 * (top-level whitespace waits here); `text` is inside a top-level text block; `action` is inside
 * the JSON body of a top-level `<action>`, `thoughtAction` inside one that sits in a `<thought>`.
 */
export const PARSER_STATES = [
  "top",
  "text",
  "thought",
  "response",
  "feed",
  "action",
  "thoughtAction",
] as const;
export type ParserState = (typeof PARSER_STATES)[number];

/** The protocol's tags as inputs; `context_feed` is `feed` here. */
export const TAG_INPUTS = [
  "open-thought",
  "open-response",
  "open-feed",
  "open-action",
  "close-thought",
  "close-response",
  "close-feed",
  "close-action",
] as const;
export type TagInput = (typeof TAG_INPUTS)[number];

/**
 * What the scanner hands the table: a run of content (`text` when it holds a non-whitespace
 * character, `blank` when it is whitespace only), one of the protocol's tags, or the end of input.
 */
export const INPUT_CLASSES = ["text", "blank", ...TAG_INPUTS, "end"] as const;
export type InputClass = (typeof INPUT_CLASSES)[number];

/** What a block-changing transition may start: a block of one kind, or an action body. */
export type Opening = "text" | "thought" | "response" | "feed" | "action";

/** The errors the table itself raises; the others come from attributes and action bodies. */
export type TableErrorCode = Extract<
  ProtocolErrorCode,
  "protocol.misplaced-tag" | "protocol.unexpected-close" | "protocol.unclosed-tag"
>;

/**
 * One cell of the table.
 *
 * - `delta`: content streams as deltas of the open block.
 * - `body`: content is collected as the open action's JSON body.
 * - `hold`: top-level whitespace waits until non-whitespace arrives (then it starts a text block)
 *   or a tag or the end arrives (then it is dropped).
 * - `literal`: the tag is not recognised in this state; its characters are content.
 * - `step`: in this order, report `error`, `finish` what is open (`closed`: by its close tag or
 *   naturally; `unclosed`: cut short, `closed: false`), move to `next`, `start` a block or an
 *   action, and with `again` hand the same input to `next` (used to close a block and then let
 *   the outer level handle the tag).
 */
export type Transition =
  | { readonly do: "delta" }
  | { readonly do: "body" }
  | { readonly do: "hold" }
  | { readonly do: "literal" }
  | {
      readonly do: "step";
      readonly error?: TableErrorCode;
      readonly finish?: "closed" | "unclosed";
      readonly next: ParserState;
      readonly start?: Opening;
      readonly again?: true;
    };

/** The shape every table must have: every state handles every input class. */
export type TransitionTable = {
  readonly [S in ParserState]: { readonly [I in InputClass]: Transition };
};

const DELTA = { do: "delta" } as const;
const BODY = { do: "body" } as const;
const LITERAL = { do: "literal" } as const;

/** Closes the block that is open because of a misplaced tag; the outer level then handles it. */
const MISPLACED = {
  do: "step",
  error: "protocol.misplaced-tag",
  finish: "unclosed",
  next: "top",
  again: true,
} as const;

/** A close tag that matches nothing open: reported and dropped; the state stays. */
const stray = (state: ParserState) =>
  ({ do: "step", error: "protocol.unexpected-close", next: state }) as const;

/** Ends a top-level text block (its end is natural, never an error) and hands the tag to `top`. */
const END_TEXT = { do: "step", finish: "closed", next: "top", again: true } as const;

/**
 * The parser's whole behaviour as one table: state × input → transition. It is typed without
 * `Partial`, so adding a state or an input class without handling it everywhere is a compile
 * error. The scanner derives from it which tags it recognises in each state (every cell that is
 * not `literal`), so raw states (`action`, `thoughtAction`, `feed`) see only their close tag;
 * in an action body, a `<` inside a JSON string is not even offered to the scanner
 * (`body-strings.ts`), so `</action>` in a string is a character.
 *
 * Nesting: actions may sit inside thoughts; nothing else nests. A misplaced open tag closes the
 * open block (`closed: false`, after a `protocol.misplaced-tag` error) and is then handled at the
 * top level, so a forgotten close tag costs one error and no content.
 */
export const TRANSITIONS: TransitionTable = {
  top: {
    text: { do: "step", next: "text", start: "text", again: true },
    blank: { do: "hold" },
    "open-thought": { do: "step", next: "thought", start: "thought" },
    "open-response": { do: "step", next: "response", start: "response" },
    "open-feed": { do: "step", next: "feed", start: "feed" },
    "open-action": { do: "step", next: "action", start: "action" },
    "close-thought": stray("top"),
    "close-response": stray("top"),
    "close-feed": stray("top"),
    "close-action": stray("top"),
    end: { do: "step", next: "top" },
  },
  text: {
    text: DELTA,
    blank: DELTA,
    "open-thought": END_TEXT,
    "open-response": END_TEXT,
    "open-feed": END_TEXT,
    "open-action": END_TEXT,
    "close-thought": END_TEXT,
    "close-response": END_TEXT,
    "close-feed": END_TEXT,
    "close-action": END_TEXT,
    end: { do: "step", finish: "closed", next: "top" },
  },
  thought: {
    text: DELTA,
    blank: DELTA,
    "open-thought": MISPLACED,
    "open-response": MISPLACED,
    "open-feed": MISPLACED,
    "open-action": { do: "step", next: "thoughtAction", start: "action" },
    "close-thought": { do: "step", finish: "closed", next: "top" },
    "close-response": stray("thought"),
    "close-feed": stray("thought"),
    "close-action": stray("thought"),
    end: { do: "step", error: "protocol.unclosed-tag", finish: "unclosed", next: "top" },
  },
  response: {
    text: DELTA,
    blank: DELTA,
    "open-thought": MISPLACED,
    "open-response": MISPLACED,
    "open-feed": MISPLACED,
    "open-action": MISPLACED,
    "close-thought": stray("response"),
    "close-response": { do: "step", finish: "closed", next: "top" },
    "close-feed": stray("response"),
    "close-action": stray("response"),
    end: { do: "step", error: "protocol.unclosed-tag", finish: "unclosed", next: "top" },
  },
  feed: {
    text: DELTA,
    blank: DELTA,
    "open-thought": LITERAL,
    "open-response": LITERAL,
    "open-feed": LITERAL,
    "open-action": LITERAL,
    "close-thought": LITERAL,
    "close-response": LITERAL,
    "close-feed": { do: "step", finish: "closed", next: "top" },
    "close-action": LITERAL,
    end: { do: "step", error: "protocol.unclosed-tag", finish: "unclosed", next: "top" },
  },
  action: {
    text: BODY,
    blank: BODY,
    "open-thought": LITERAL,
    "open-response": LITERAL,
    "open-feed": LITERAL,
    "open-action": LITERAL,
    "close-thought": LITERAL,
    "close-response": LITERAL,
    "close-feed": LITERAL,
    "close-action": { do: "step", finish: "closed", next: "top" },
    end: { do: "step", error: "protocol.unclosed-tag", finish: "unclosed", next: "top" },
  },
  thoughtAction: {
    text: BODY,
    blank: BODY,
    "open-thought": LITERAL,
    "open-response": LITERAL,
    "open-feed": LITERAL,
    "open-action": LITERAL,
    "close-thought": LITERAL,
    "close-response": LITERAL,
    "close-feed": LITERAL,
    "close-action": { do: "step", finish: "closed", next: "thought" },
    end: {
      do: "step",
      error: "protocol.unclosed-tag",
      finish: "unclosed",
      next: "thought",
      again: true,
    },
  },
};

/** The tags the scanner recognises in `state`: those whose cell is not `literal`. */
export function recognizedTags(state: ParserState, table: TransitionTable = TRANSITIONS) {
  return TAG_INPUTS.filter((input) => table[state][input].do !== "literal");
}
