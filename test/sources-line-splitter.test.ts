import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineSplitter, type SplitLine } from "../src/sources/index.js";

const encoder = new TextEncoder();

/** Every line of `input` pushed in the pieces cut at `cuts`, then end(). */
function splitAt(input: Uint8Array, cuts: readonly number[], maxLineBytes: number): SplitLine[] {
  const splitter = new LineSplitter(maxLineBytes);
  const points = [...new Set(cuts.map((cut) => cut % (input.length + 1)))].sort((a, b) => a - b);
  const lines: SplitLine[] = [];
  let from = 0;
  for (const point of [...points, input.length]) {
    lines.push(...splitter.push(input.subarray(from, point)));
    from = point;
  }
  lines.push(...splitter.end());
  return lines;
}

/** Bytes that favour newlines, carriage returns and multi-byte / broken UTF-8. */
const streamBytes = fc
  .array(
    fc.oneof(
      fc.constantFrom(0x0a, 0x0d, 0x61, 0x20),
      fc.constantFrom(0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0xc0),
      fc.integer({ min: 0, max: 255 }),
    ),
    { maxLength: 400 },
  )
  .map((bytes) => Uint8Array.from(bytes));

const cutsArb = fc.array(fc.nat(), { maxLength: 30 });

/** True when `bytes` hold the UTF-8 of U+FFFD itself (so a replacement cannot be told apart). */
function holdsReplacement(bytes: Uint8Array): boolean {
  return Buffer.from(bytes).includes(Buffer.from([0xef, 0xbf, 0xbd]));
}

describe("line splitter (properties)", () => {
  it("gives the same lines and byte counts however the stream is cut", () => {
    fc.assert(
      fc.property(streamBytes, cutsArb, fc.integer({ min: 1, max: 40 }), (input, cuts, max) => {
        expect(splitAt(input, cuts, max)).toEqual(splitAt(input, [], max));
      }),
      { numRuns: 1500 },
    );
  });

  it("accounts for every byte: lines' bytes plus pendingBytes equal the input so far", () => {
    fc.assert(
      fc.property(streamBytes, cutsArb, fc.integer({ min: 1, max: 40 }), (input, cuts, max) => {
        const splitter = new LineSplitter(max);
        const points = [...cuts.map((cut) => cut % (input.length + 1)), input.length].sort(
          (a, b) => a - b,
        );
        let from = 0;
        let counted = 0;
        for (const point of points) {
          for (const line of splitter.push(input.subarray(from, point))) counted += line.bytes;
          from = Math.max(from, point);
          expect(counted + splitter.pendingBytes).toBe(from);
          expect(splitter.keptBytes).toBeLessThanOrEqual(max + 1);
        }
        for (const line of splitter.end()) counted += line.bytes;
        expect(counted).toBe(input.length);
        expect(splitter.pendingBytes).toBe(0);
      }),
      { numRuns: 1500 },
    );
  });

  it("decodes valid UTF-8 text into its lines (\\r\\n and \\n alike) when no line is cut", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, "")),
        ),
        fc.array(fc.boolean()),
        cutsArb,
        (texts, crlf, cuts) => {
          const input = texts
            .map((text, index) => `${text}${crlf[index] ? "\r\n" : "\n"}`)
            .join("");
          const lines = splitAt(encoder.encode(input), cuts, 1024);
          expect(lines.map((line) => line.text)).toEqual(texts);
          expect(lines.every((line) => line.cut === 0 && line.invalid === 0)).toBe(true);
        },
      ),
      { numRuns: 800 },
    );
  });

  it("cuts a long line at a character boundary and counts what it dropped and what was invalid", () => {
    fc.assert(
      fc.property(streamBytes, fc.integer({ min: 1, max: 24 }), (input, max) => {
        fc.pre(!holdsReplacement(input));
        const lines = splitAt(input, [], max);
        let from = 0;
        for (const line of lines) {
          const raw = input.subarray(from, from + line.bytes);
          from += line.bytes;
          let content = raw.length;
          if (raw[content - 1] === 0x0a) content--;
          if (raw[content - 1] === 0x0d) content--;
          const validText = line.text.replaceAll("\uFFFD", "");
          const validBytes = Buffer.byteLength(validText);
          const keptBytes = content - line.cut;
          expect(keptBytes).toBeLessThanOrEqual(max);
          expect(keptBytes).toBeGreaterThanOrEqual(Math.min(content, max) - 3);
          expect(validBytes + line.invalid).toBe(keptBytes);
          const whole = new TextDecoder().decode(raw.subarray(0, content));
          if (line.cut === 0) expect(line.text).toBe(whole);
          else if (line.invalid === 0) expect(whole.startsWith(line.text)).toBe(true);
        }
      }),
      { numRuns: 1500 },
    );
  });
});

describe("line splitter (examples)", () => {
  it("holds a partial line until its newline, even a character split between pushes", () => {
    const splitter = new LineSplitter(100);
    const euro = encoder.encode("€");
    expect(splitter.push(Uint8Array.of(0x61, euro[0]!))).toEqual([]);
    expect(splitter.pendingBytes).toBe(2);
    expect(splitter.push(euro.subarray(1))).toEqual([]);
    expect(splitter.push(encoder.encode("b\r\nrest"))).toEqual([
      { text: "a€b", bytes: 7, cut: 0, invalid: 0 },
    ]);
    expect(splitter.end()).toEqual([{ text: "rest", bytes: 4, cut: 0, invalid: 0 }]);
    expect(splitter.end()).toEqual([]);
  });

  it("keeps one 50 MB line bounded: cut to maxLineBytes, the rest only counted", () => {
    const splitter = new LineSplitter(1000);
    const piece = new Uint8Array(64 * 1024).fill(0x78);
    const total = 50 * 1024 * 1024;
    for (let sent = 0; sent < total; sent += piece.length) {
      expect(splitter.push(piece)).toEqual([]);
      expect(splitter.keptBytes).toBeLessThanOrEqual(1001);
    }
    expect(splitter.pendingBytes).toBe(total);
    const [line] = splitter.push(Uint8Array.of(0x0a));
    expect(line).toEqual({
      text: "x".repeat(1000),
      bytes: total + 1,
      cut: total - 1000,
      invalid: 0,
    });
  });

  it("never cuts inside a character: a 3-byte character straddling the limit is dropped whole", () => {
    const splitter = new LineSplitter(4);
    const [line] = splitter.push(encoder.encode("abc€def\n"));
    expect(line).toEqual({ text: "abc", bytes: 10, cut: 6, invalid: 0 });
  });

  it("replaces binary garbage and invalid UTF-8 and counts the invalid bytes", () => {
    const splitter = new LineSplitter(100);
    const [line] = splitter.push(
      Uint8Array.of(0x61, 0xff, 0xc3, 0x28, 0x00, 0xed, 0xa0, 0x80, 0x0a),
    );
    expect(line!.text).toBe("a\uFFFD\uFFFD(\u0000\uFFFD\uFFFD\uFFFD");
    expect(line!.invalid).toBe(5);
    expect(line!.bytes).toBe(9);
  });
});
