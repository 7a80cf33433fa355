import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createChatRenderer, createMarkdownStream } from "../src/cli/chat/index.js";
import { createStyle } from "../src/cli/format.js";
import type { RunNotice } from "../src/runtime/run-notice.js";
import { block, collectOutput, manualTimers, stripCursor } from "./support/chat-fakes.js";

const TTY_ENV = { TERM: "xterm-256color" };

/** Markdown rendered by a stream fed `chunks` in order. */
function render(chunks: readonly string[], color = true, width = 40): string {
  let out = "";
  const stream = createMarkdownStream({
    style: createStyle(color),
    width,
    write: (text) => {
      out += text;
    },
  });
  for (const chunk of chunks) stream.push(chunk);
  stream.end();
  return out;
}

/** What the chat renderer writes for one response block streamed as `chunks`. */
function renderResponse(chunks: readonly string[], env: Record<string, string> = TTY_ENV): string {
  const output = collectOutput(true, 60);
  const renderer = createChatRenderer({ output, env, clockTimers: manualTimers(), now: () => 0 });
  const notices: RunNotice[] = block("s1", 0, "response", chunks);
  for (const notice of notices) renderer.observe(notice);
  renderer.close();
  return stripCursor(output.text);
}

/** `text` cut at the given offsets. */
function cut(text: string, offsets: readonly number[]): string[] {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort(
    (a, b) => a - b,
  );
  const pieces: string[] = [];
  let last = 0;
  for (const point of points) {
    pieces.push(text.slice(last, point));
    last = point;
  }
  pieces.push(text.slice(last));
  return pieces;
}

const ESC = "\x1b[";
const bold = (text: string) => `${ESC}1m${text}${ESC}22m`;
const italic = (text: string) => `${ESC}3m${text}${ESC}23m`;
const dim = (text: string) => `${ESC}2m${text}${ESC}22m`;
const cyan = (text: string) => `${ESC}36m${text}${ESC}39m`;

describe("markdown rendering", () => {
  it("renders headings bold without their hashes", () => {
    expect(render(["# Title\n## Second ##\n"])).toBe(`${bold("Title")}\n${bold("Second")}\n`);
  });

  it("renders bold, italic, both, inline code and links", () => {
    expect(
      render(
        ["Say **loud**, *soft*, _soft_, ***both***, `x = 1` and [docs](https://a.b/c)."],
        true,
        200,
      ),
    ).toBe(
      `Say ${bold("loud")}, ${italic("soft")}, ${italic("soft")}, ${bold(italic("both"))}, ${cyan("x = 1")} and docs ${dim("(https://a.b/c)")}.\n`,
    );
  });

  it("leaves markers that do not open or close as written", () => {
    expect(render(["2 * 3 = 6, snake_case_name, a ** b, [x] (y), `open, *open"], true, 200)).toBe(
      "2 * 3 = 6, snake_case_name, a ** b, [x] (y), `open, *open\n",
    );
  });

  it("nests italic inside bold and keeps escapes literal", () => {
    expect(render(["**a *b* c** \\*not\\*"])).toBe(
      `${bold("a ")}${bold(italic("b"))}${bold(" c")} *not*\n`,
    );
  });

  it("renders fenced code in a dim box with its language label, untouched inside", () => {
    expect(render(["```ts\nconst a = **1**;\n\n```\nafter"])).toBe(
      `${dim("┌─ ts")}\n${dim("│")} const a = **1**;\n${dim("│")} \n${dim("└─")}\nafter\n`,
    );
  });

  it("closes a code block left open at the end", () => {
    expect(render(["~~~\ncode"])).toBe(`${dim("┌─")}\n${dim("│")} code\n${dim("└─")}\n`);
  });

  it("renders bullet and numbered lists, nested by indentation", () => {
    expect(render(["- one\n* two\n  + **nested**\n1. first\n2) second\n"])).toBe(
      `• one\n• two\n  ◦ ${bold("nested")}\n1. first\n2) second\n`,
    );
  });

  it("renders block quotes behind a dim bar and rules as a dim line", () => {
    expect(render(["> quoted *text*\n>\n---\n"])).toBe(
      `${dim("│")} quoted ${italic("text")}\n${dim("│")} \n${dim("─".repeat(39))}\n`,
    );
  });

  it("collapses blank lines and drops them at both ends", () => {
    expect(render(["\n\n  \nfirst\n\n\n\nsecond\n\n\n"])).toBe("first\n\nsecond\n");
  });

  it("strips control characters from model text", () => {
    expect(render(["a\x1b[31mb\x07c\r\n"])).toBe("a[31mbc\n");
  });

  it("keeps backticks and drops other colour when colour is off", () => {
    expect(render(["# T\n**b** `c` [l](u)\n```\nx\n```"], false)).toBe(
      "T\nb `c` l (u)\n┌─\n│ x\n└─\n",
    );
  });

  it("wraps paragraphs and list items at word boundaries, never code", () => {
    const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
    expect(render([words], false, 21)).toBe(
      "alpha beta gamma\ndelta epsilon zeta\neta theta iota kappa\n",
    );
    expect(render([`- ${words}`], false, 21)).toBe(
      "• alpha beta gamma\n  delta epsilon zeta\n  eta theta iota\n  kappa\n",
    );
    expect(render([`Say **${words}**`], true, 21)).toBe(
      `Say ${ESC}1malpha beta gamma\ndelta epsilon zeta\neta theta iota kappa${ESC}22m\n`,
    );
    expect(render([`\`\`\`\n${words}\n\`\`\``], false, 21)).toBe(`┌─\n│ ${words}\n└─\n`);
    expect(render(["a-very-long-word-that-cannot-fit-anywhere here"], false, 21)).toBe(
      "a-very-long-word-that-cannot-fit-anywhere\nhere\n",
    );
  });

  it("streams a paragraph before its line ends, holding back only an unclosed marker and the last word", () => {
    const writes: string[] = [];
    const stream = createMarkdownStream({
      style: createStyle(true),
      width: 80,
      write: (text) => writes.push(text),
    });
    stream.push("Hello wor");
    expect(writes.join("")).toBe("Hello");
    stream.push("ld **bo");
    expect(writes.join("")).toBe("Hello world");
    stream.push("ld** done");
    expect(writes.join("")).toBe(`Hello world ${bold("bold")}`);
    stream.push("\n# Head");
    expect(writes.join("")).toBe(`Hello world ${bold("bold")} done\n`);
    stream.end();
    expect(writes.join("")).toBe(`Hello world ${bold("bold")} done\n${bold("Head")}\n`);
  });
});

const CONSTRUCTS = [
  "# Heading with `code`",
  "### Third **level**",
  "Plain text with **bold**, *italic*, _under_, ***both*** and `inline code`.",
  "A [link](https://example.com/a_b) and an ![image](x.png) and [not a link] (x).",
  "- bullet *one*",
  "  - nested bullet",
  "* star bullet",
  "+ plus bullet",
  "1. numbered",
  "10) numbered paren",
  "> a quote with **bold**",
  ">no space quote",
  "```python",
  "def f(x): return x * 2  # **not bold**",
  "```",
  "~~~",
  "tilde fence",
  "~~~",
  "---",
  "* * *",
  "",
  "",
  "Escapes: \\*x\\* and \\` and a lone \\",
  "Unclosed **bold and `code and [link",
  "snake_case_words and 2 * 3 ** 4",
  "#hashtag and ####### seven",
  "2024 was a year",
  "``double `tick` code``",
  "Wide 字 and emoji 🎉 and café",
];

const fuzzText = fc.string({
  unit: fc.constantFrom(..."ab `*_[]()\\#->1.~!\n é"),
  maxLength: 120,
});

const documents = fc.oneof(
  fc.array(fc.constantFrom(...CONSTRUCTS), { maxLength: 30 }).map((lines) => lines.join("\n")),
  fc
    .array(fc.oneof(fc.constantFrom(...CONSTRUCTS), fuzzText), { maxLength: 12 })
    .map((lines) => lines.join("\n")),
  fuzzText,
);

describe("markdown under any chunking", () => {
  it("gives the same bytes for every construct as the whole text in one chunk", () => {
    const text = CONSTRUCTS.join("\n");
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (offsets) => {
        expect(render(cut(text, offsets))).toBe(render([text]));
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same bytes for random documents, with and without colour", () => {
    fc.assert(
      fc.property(
        documents,
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.boolean(),
        (text, offsets, color) => {
          expect(render(cut(text, offsets), color)).toBe(render([text], color));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("gives the same terminal output through the chat renderer, one character at a time too", () => {
    fc.assert(
      fc.property(documents, fc.array(fc.nat(), { maxLength: 30 }), (text, offsets) => {
        const whole = renderResponse([text]);
        expect(renderResponse(cut(text, offsets))).toBe(whole);
        expect(renderResponse(Array.from(text))).toBe(whole);
        expect(renderResponse(cut(text, offsets), { NO_COLOR: "1" })).toBe(
          renderResponse([text], { NO_COLOR: "1" }),
        );
      }),
      { numRuns: 200 },
    );
  });
});
