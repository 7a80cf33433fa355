import { describe, expect, it } from "vitest";
import { PROTOCOL_ERROR_CODES } from "../src/protocol/index.js";
import {
  INPUT_CLASSES,
  PARSER_STATES,
  type ParserState,
  recognizedTags,
  TAG_INPUTS,
  TRANSITIONS,
  type Transition,
  type TransitionTable,
} from "../src/protocol/transition-table.js";

const cells = PARSER_STATES.flatMap((state) =>
  INPUT_CLASSES.map((input) => ({ state, input, cell: TRANSITIONS[state][input] as Transition })),
);

describe("the transition table", () => {
  it("is exhaustive at compile time: a missing state or input class does not type-check", () => {
    const { thought: _dropped, ...withoutThought } = TRANSITIONS;
    // @ts-expect-error the `thought` state is not handled
    const missingState: TransitionTable = withoutThought;
    const { end: _end, ...rowWithoutEnd } = TRANSITIONS.top;
    // @ts-expect-error the `end` input is not handled in `top`
    const missingInput: TransitionTable = { ...TRANSITIONS, top: rowWithoutEnd };
    expect(Object.keys(missingState)).not.toContain("thought");
    expect(Object.keys(missingInput.top)).not.toContain("end");
  });

  it("has a cell for every state and input class at run time too", () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...PARSER_STATES].sort());
    for (const state of PARSER_STATES) {
      expect(Object.keys(TRANSITIONS[state]).sort()).toEqual([...INPUT_CLASSES].sort());
    }
    expect(cells).toHaveLength(PARSER_STATES.length * INPUT_CLASSES.length);
  });

  it("moves only to known states and raises only protocol error codes", () => {
    for (const { cell } of cells) {
      if (cell.do !== "step") continue;
      expect(PARSER_STATES).toContain(cell.next);
      if (cell.error) expect(PROTOCOL_ERROR_CODES).toContain(cell.error);
    }
  });

  it("never loses content: text and blank runs are never literal", () => {
    for (const { state, input, cell } of cells) {
      if (input !== "text" && input !== "blank") continue;
      expect(cell.do, `${state} × ${input}`).not.toBe("literal");
      if (cell.do === "hold") expect([state, input]).toEqual(["top", "blank"]);
    }
  });

  it("always settles: following `again` ends in a cell that does not repeat, within a few steps", () => {
    for (const { state, input } of cells) {
      let current: ParserState = state;
      let steps = 0;
      for (;;) {
        const cell = TRANSITIONS[current][input];
        if (cell.do !== "step" || !cell.again) break;
        current = cell.next;
        expect(++steps, `${state} × ${input}`).toBeLessThan(4);
      }
    }
  });

  it("ends in `top` after the end of input, whatever the state", () => {
    for (const state of PARSER_STATES) {
      let current: ParserState = state;
      for (;;) {
        const cell = TRANSITIONS[current].end;
        expect(cell.do).toBe("step");
        if (cell.do !== "step") break;
        current = cell.next;
        if (!cell.again) break;
      }
      expect(current, state).toBe("top");
    }
  });

  it("makes action bodies and feeds raw: only their own close tag is a tag there", () => {
    expect(recognizedTags("action")).toEqual(["close-action"]);
    expect(recognizedTags("thoughtAction")).toEqual(["close-action"]);
    expect(recognizedTags("feed")).toEqual(["close-feed"]);
    for (const state of ["top", "text", "thought", "response"] as const) {
      expect(recognizedTags(state)).toEqual([...TAG_INPUTS]);
    }
  });

  it("allows actions inside thoughts and nothing else nested", () => {
    expect(TRANSITIONS.thought["open-action"]).toEqual({
      do: "step",
      next: "thoughtAction",
      start: "action",
    });
    const misplaced = [
      ["thought", "open-thought"],
      ["thought", "open-response"],
      ["thought", "open-feed"],
      ["response", "open-thought"],
      ["response", "open-response"],
      ["response", "open-feed"],
      ["response", "open-action"],
    ] as const;
    for (const [state, input] of misplaced) {
      expect(TRANSITIONS[state][input]).toMatchObject({
        error: "protocol.misplaced-tag",
        finish: "unclosed",
        next: "top",
        again: true,
      });
    }
  });
});
