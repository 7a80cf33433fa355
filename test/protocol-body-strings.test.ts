import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ActionRequest, coalesceDeltas, type ProtocolEvent } from "../src/protocol/index.js";
import { chunkBySizes, chunking, parse, parseChunks } from "./support/protocol-documents.js";

/** The merged deltas of each block, in order: `kind:text`. */
function blocks(events: readonly ProtocolEvent[]): string[] {
  const texts: string[] = [];
  for (const event of events) {
    if (event.type === "block-start") texts[event.block] = `${event.kind}:`;
    if (event.type === "block-delta") texts[event.block] += event.text;
  }
  return texts;
}

const actions = (events: readonly ProtocolEvent[]): ActionRequest[] =>
  events.flatMap((event) => (event.type === "action" ? [event.action] : []));
const errors = (events: readonly ProtocolEvent[]) =>
  events.flatMap((event) => (event.type === "error" ? [event] : []));

const HTML =
  '<!doctype html>\n<html><body>\n<response>Hi</response>\n<p class="a">"quoted" \\ back</p>\n<script>document.write("</action>")</script>\n</body></html>\n';
const WRITE = JSON.stringify({
  name: "fs.write",
  parameters: { path: "index.html", content: HTML },
});
const OPEN = '<action type="tool" mode="sync" id="w1">';

/** Every chunking of `text` gives the events of one push. */
function expectSplitInvariant(text: string): void {
  const whole = parse(text);
  expect(coalesceDeltas(parseChunks(chunkBySizes(text, [1])))).toEqual(whole);
  fc.assert(
    fc.property(chunking, (cut) => {
      expect(coalesceDeltas(parseChunks(cut(text)))).toEqual(whole);
    }),
    { numRuns: 100 },
  );
}

describe("JSON strings in an action body", () => {
  it("keeps </action> and <response> inside a string as characters (an HTML file through fs.write)", () => {
    const text = `<thought>Writing the page.\n${OPEN}\n${WRITE}\n</action>\n</thought>\n<response>Done.</response>`;
    const events = parse(text);
    expect(errors(events)).toEqual([]);
    expect(actions(events)).toHaveLength(1);
    expect(actions(events)[0]!.parameters).toEqual({ path: "index.html", content: HTML });
    expect(blocks(events)).toEqual(["thought:Writing the page.\n\n", "response:Done."]);
    expectSplitInvariant(text);
  });

  it('follows escapes: \\" stays in the string, \\\\ before a quote lets the quote end it', () => {
    const stays = `${OPEN}{"name":"n","parameters":{"a":"x\\"</action>y"}}</action>`;
    expect(actions(parse(stays))[0]!.parameters).toEqual({ a: 'x"</action>y' });
    const ends = `${OPEN}{"name":"n","parameters":{"a":"x\\\\"}}</action>after`;
    const events = parse(ends);
    expect(actions(events)[0]!.parameters).toEqual({ a: "x\\" });
    expect(blocks(events)).toEqual(["text:after"]);
    expectSplitInvariant(stays);
    expectSplitInvariant(ends);
  });

  it("follows strings in a body that starts with [ too (it is then rejected as not an object)", () => {
    const events = parse(`${OPEN} ["</action>"]</action><response>r</response>`);
    expect(errors(events)).toMatchObject([{ code: "protocol.bad-action-body" }]);
    expect(errors(events)[0]!.message).toContain("must be a JSON object, not an array");
    expect(blocks(events)).toEqual(["response:r"]);
  });

  it("scans a body that does not start with { or [ as before: the first </action> ends it", () => {
    const text = `${OPEN}name: "x</action>"</action>`;
    const events = parse(text);
    expect(errors(events)[0]).toMatchObject({ code: "protocol.bad-action-body" });
    // The rest after the first </action> is top-level text, and the second close tag closes nothing.
    expect(blocks(events)).toEqual(['text:"']);
    expect(errors(events)[1]).toMatchObject({ code: "protocol.unexpected-close" });
    expectSplitInvariant(text);
  });

  it("ends a string at a raw line break (JSON forbids one there), so a lost quote costs one line", () => {
    const text = `${OPEN}\n{"name":"search","parameters":{"q":"cats}}\n</action>\n<response>Answer</response>`;
    const events = parse(text);
    expect(errors(events)).toHaveLength(1);
    expect(errors(events)[0]).toMatchObject({ code: "protocol.bad-action-body", actionId: "w1" });
    expect(blocks(events)).toEqual(["response:Answer"]);
    expectSplitInvariant(text);
    // A carriage return, and one right after a backslash, break the string as well.
    for (const brk of ["\r", "\\\n"]) {
      const other = `${OPEN}{"name":"n","parameters":{"q":"a${brk}</action>ok`;
      expect(blocks(parse(other))).toEqual(["text:ok"]);
      expectSplitInvariant(other);
    }
  });

  it("still closes an empty or blank body at its </action>", () => {
    for (const body of ["", "  \n "]) {
      const events = parse(`${OPEN}${body}</action><response>r</response>`);
      expect(errors(events)[0]!.message).toContain("is empty");
      expect(blocks(events)).toEqual(["response:r"]);
    }
  });

  it("says so when the output ends inside a string of an unclosed action", () => {
    const events = parse(`${OPEN}{"name":"n","parameters":{"q":"a}}</action>`);
    expect(errors(events)).toHaveLength(1);
    expect(errors(events)[0]).toMatchObject({ code: "protocol.unclosed-tag", actionId: "w1" });
    expect(errors(events)[0]!.message).toContain("ended inside a JSON string");
    const closedString = parse(`${OPEN}{"name":"n","parameters":{}}`);
    expect(errors(closedString)[0]!.message).not.toContain("JSON string");
  });

  it("tracks each action's strings afresh", () => {
    const first = `${OPEN}{"name":"n","parameters":{"q":"a"}}</action>`;
    const second =
      '<action type="tool" mode="sync" id="w2">{"name":"m","parameters":{"q":"</action>"}}</action>';
    const events = parse(`${first}${second}`);
    expect(errors(events)).toEqual([]);
    expect(actions(events).map((a) => a.parameters)).toEqual([{ q: "a" }, { q: "</action>" }]);
  });
});
