import {
  INPUT_CLASSES,
  type InputClass,
  type Opening,
  PARSER_STATES,
  type ParserState,
  recognizedTags,
  TAG_INPUTS,
  type TableErrorCode,
  TRANSITIONS,
} from "./transition-table.js";

/**
 * `TRANSITIONS` compiled once into arrays indexed by small integers, so the parser's hot path
 * looks cells up by number instead of by string. Nothing here decides anything: every value is
 * derived from the typed table, which stays the single source of truth.
 */

/** The index of each input class in `INPUT_CLASSES`. */
export const INPUT = Object.fromEntries(INPUT_CLASSES.map((input, i) => [input, i])) as {
  readonly [I in InputClass]: number;
};

/** The index of each state in `PARSER_STATES`. */
export const STATE = Object.fromEntries(PARSER_STATES.map((state, i) => [state, i])) as {
  readonly [S in ParserState]: number;
};

/** What a compiled cell does (`op`) and how content is handled in a state (`CONTENT`). */
export const OP_DELTA = 0;
export const OP_BODY = 1;
export const OP_HOLD = 2;
export const OP_LITERAL = 3;
export const OP_STEP = 4;
/** Content of a state needs the table: whether the run is blank decides (`top`). */
export const CONTENT_DECIDE = 5;

/** One cell, with a fixed shape: the transition of `TRANSITIONS` it was compiled from. */
export interface CompiledCell {
  readonly op: number;
  readonly error: TableErrorCode | undefined;
  /** 0: nothing to finish; 1: closed by its tag or naturally; 2: cut short. */
  readonly finish: 0 | 1 | 2;
  readonly next: number;
  readonly start: Opening | undefined;
  readonly again: boolean;
}

const OPS = { delta: OP_DELTA, body: OP_BODY, hold: OP_HOLD, literal: OP_LITERAL, step: OP_STEP };

/** Cells by `state * INPUT_CLASSES.length + input`. */
export const CELLS: readonly CompiledCell[] = PARSER_STATES.flatMap((state) =>
  INPUT_CLASSES.map((input): CompiledCell => {
    const cell = TRANSITIONS[state][input];
    if (cell.do !== "step") {
      return {
        op: OPS[cell.do],
        error: undefined,
        finish: 0,
        next: STATE[state],
        start: undefined,
        again: false,
      };
    }
    return {
      op: OP_STEP,
      error: cell.error,
      finish: cell.finish === "closed" ? 1 : cell.finish === "unclosed" ? 2 : 0,
      next: STATE[cell.next],
      start: cell.start,
      again: cell.again === true,
    };
  }),
);

/** The number of input classes: the stride of `CELLS`. */
export const INPUTS = INPUT_CLASSES.length;

/**
 * How content is handled in each state: `OP_DELTA` or `OP_BODY` when the `text` and `blank`
 * cells agree on it, else `CONTENT_DECIDE`.
 */
export const CONTENT: readonly number[] = PARSER_STATES.map((state) => {
  const { text, blank } = TRANSITIONS[state];
  if (text.do === "delta" && blank.do === "delta") return OP_DELTA;
  if (text.do === "body" && blank.do === "body") return OP_BODY;
  return CONTENT_DECIDE;
});

/** Whether each state recognises each input (by input index; only tags can be true). */
export const RECOGNIZED: readonly (readonly boolean[])[] = PARSER_STATES.map((state) => {
  const tags = new Set(recognizedTags(state));
  return INPUT_CLASSES.map(
    (input) => (TAG_INPUTS as readonly string[]).includes(input) && tags.has(input as never),
  );
});
