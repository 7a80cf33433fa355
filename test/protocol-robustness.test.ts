import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { coalesceDeltas, createProtocolParser } from "../src/protocol/index.js";
import { chunking, expectWellFormed, parse, parseChunks } from "./support/protocol-documents.js";

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnits = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  maxLength: 60,
});

/** Protocol-heavy soup: tag names, attributes, quotes and JSON punctuation in any order. */
const tagSoup = fc
  .array(
    fc.constantFrom(
      "<",
      "</",
      "/",
      ">",
      "thought",
      "ACTION",
      "response",
      "context_feed",
      " type=",
      " mode=",
      " id=",
      " final=",
      '"tool"',
      "'sync'",
      '"a1"',
      "false",
      '"',
      "'",
      "{",
      "}",
      '"name":"n"',
      '"parameters":{}',
      ",",
      ":",
      "\n",
      " ",
      "\uD83D",
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(""));

const anyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  codeUnits,
  tagSoup,
  fc.string({ unit: "grapheme-ascii", maxLength: 80 }),
);

describe("the parser on arbitrary input", () => {
  it("never throws, closes every block it opened, and stays split-invariant", () => {
    fc.assert(
      fc.property(anyText, chunking, (text, cut) => {
        const whole = parseChunks([text]);
        expectWellFormed(whole);
        const chunked = parseChunks(cut(text));
        expectWellFormed(chunked);
        expect(coalesceDeltas(chunked)).toEqual(coalesceDeltas(whole));
      }),
      { numRuns: 1000 },
    );
  });

  it("loses no text: outside tags, every character of plain text comes back", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), (raw) => {
        const text = `x${raw.replaceAll("<", "")}`;
        const deltas = parse(text).filter((event) => event.type === "block-delta");
        expect(deltas.map((event) => event.type === "block-delta" && event.text).join("")).toBe(
          text,
        );
      }),
    );
  });

  it("handles a very long output in one push and in many, without deep recursion", () => {
    const body = `{"name":"n","parameters":${"[".repeat(50_000)}${"]".repeat(50_000)}}`;
    const text = `<thought>${"a < b ".repeat(20_000)}<action type="tool" mode="sync" id="deep">${body}</action></thought>`;
    const events = parse(text);
    expectWellFormed(events);
    expect(events.filter((event) => event.type === "error")).toHaveLength(1);
    const broken = `<action type="tool" mode="sync" id="deep">${"[".repeat(100_000)}</action>`;
    const errors = parse(broken).filter((event) => event.type === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "protocol.bad-action-body" });
  });

  it("treats push after end, end after end and a non-string chunk as programmer errors", () => {
    const parser = createProtocolParser();
    parser.push("<thought>hi");
    expect(parser.end().map((event) => event.type)).toEqual(["error", "block-end"]);
    expect(() => parser.push("more")).toThrow(TypeError);
    expect(() => parser.end()).toThrow(TypeError);
    expect(() => createProtocolParser().push(42 as unknown as string)).toThrow(TypeError);
  });
});
