import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { coalesceDeltas } from "../src/protocol/index.js";
import {
  chunkBySizes,
  chunking,
  expectWellFormed,
  hasLoneSurrogate,
  parse,
  parseChunks,
  protocolDocument,
} from "./support/protocol-documents.js";

/** Tag fragments that look like the protocol, to glue into random text. */
const fragment = fc.oneof(
  fc.constantFrom(
    "<",
    "</",
    "<t",
    "<thought>",
    "</thought>",
    "<THOUGHT",
    "<action",
    ' type="tool"',
    " mode='sync'",
    " id=a1",
    ' id="a1"',
    ">",
    "/>",
    '{"name":"x","parameters":{}}',
    '{"name":"x","parameters":{"a":"',
    '"}}',
    "\\",
    '\\"',
    "</action>",
    "</Action >",
    '<response final="false">',
    "<response",
    "</response>",
    '<context_feed id="f">',
    "</context_feed>",
    '"',
    "'",
    "=",
    "\n",
    " ",
    "😀",
    "\uD83D",
    "\uDE00",
    "a < b",
    "<div>",
  ),
  fc.string({ maxLength: 6 }),
);

const fragments = fc.array(fragment, { maxLength: 24 }).map((parts) => parts.join(""));

describe("split invariance over generated protocol documents", () => {
  it("gives exactly the expected events, positions included, in one push", () => {
    fc.assert(
      fc.property(protocolDocument, ({ text, expected }) => {
        expect(parse(text)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same events under any chunking, 1-character chunks included", () => {
    fc.assert(
      fc.property(protocolDocument, chunking, ({ text, expected }, cut) => {
        expect(coalesceDeltas(parseChunks(cut(text)))).toEqual(expected);
        expect(coalesceDeltas(parseChunks(chunkBySizes(text, [1])))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("never puts a tag fragment or half a surrogate pair into a delta", () => {
    fc.assert(
      fc.property(protocolDocument, chunking, ({ text }, cut) => {
        const events = parseChunks(cut(text));
        expectWellFormed(events);
        for (const event of events) {
          if (event.type !== "block-delta") continue;
          expect(hasLoneSurrogate(event.text)).toBe(false);
          // A delta may end in a stray "<" only if the text after it is decided as text;
          // protocol tags themselves never reach a delta (outside raw feeds).
          if (event.kind !== "feed") {
            expect(event.text).not.toMatch(/<\/?(thought|action|response|context_feed)[\s/>]/i);
          }
        }
        const merged = coalesceDeltas(events).filter((event) => event.type === "block-delta");
        for (const event of merged) {
          if (event.kind === "feed") continue;
          expect(event.text).not.toMatch(/<\/?(thought|action|response|context_feed)[\s/>]/i);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("split invariance over random text with tag-like fragments", () => {
  it("gives the same merged events under any chunking as in one push", () => {
    fc.assert(
      fc.property(fragments, chunking, (text, cut) => {
        const whole = parse(text);
        expectWellFormed(whole);
        expect(coalesceDeltas(parseChunks(cut(text)))).toEqual(whole);
        expect(coalesceDeltas(parseChunks(chunkBySizes(text, [1])))).toEqual(whole);
      }),
      { numRuns: 500 },
    );
  });

  it("quotes a whole character in a malformed tag's error when a chunk ends inside it", () => {
    // Found by the property above (seed -330879782): the error quoted half of the emoji.
    const text = "<THOUGHT 😀";
    const whole = parse(text);
    expect(coalesceDeltas(parseChunks(["<", "THOUGHT \ud83d", "\ude00"]))).toEqual(whole);
    expect(JSON.stringify(whole)).toContain('found \\"😀\\"');
  });

  it("holds back a possible tag until it is decided, and never splits a surrogate pair", () => {
    fc.assert(
      fc.property(fragments, chunking, (text, cut) => {
        const wellFormed = !hasLoneSurrogate(text);
        for (const event of parseChunks(cut(text))) {
          if (event.type !== "block-delta") continue;
          if (wellFormed) expect(hasLoneSurrogate(event.text)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});
