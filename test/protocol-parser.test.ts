import { describe, expect, it } from "vitest";
import {
  type ActionRequest,
  createProtocolParser,
  type ProtocolEvent,
} from "../src/protocol/index.js";
import { parse, parseChunks, positionIn } from "./support/protocol-documents.js";

const pos = (offset: number, line: number, column: number) => ({ offset, line, column });

/** The merged deltas of each block, in order: `kind:text`. */
function blocks(events: readonly ProtocolEvent[]): string[] {
  const texts: string[] = [];
  for (const event of events) {
    if (event.type === "block-start") texts[event.block] = `${event.kind}:`;
    if (event.type === "block-delta") texts[event.block] += event.text;
  }
  return texts;
}

function actions(events: readonly ProtocolEvent[]): ActionRequest[] {
  return events.flatMap((event) => (event.type === "action" ? [event.action] : []));
}

const errors = (events: readonly ProtocolEvent[]) => events.filter((e) => e.type === "error");

const BODY = '{"name":"web_scraper","parameters":{"url":"https://example.com"}}';

describe("blocks", () => {
  it("parses a thought, a response and text, with positions of each boundary", () => {
    const text = 'Hi.\n<thought>plan</thought>\n<response final="false">done</response>';
    expect(parse(text)).toEqual([
      { type: "block-start", kind: "text", block: 0, at: pos(0, 1, 1) },
      { type: "block-delta", kind: "text", block: 0, text: "Hi.\n" },
      { type: "block-end", kind: "text", block: 0, closed: true, at: pos(4, 2, 1) },
      { type: "block-start", kind: "thought", block: 1, at: pos(4, 2, 1) },
      { type: "block-delta", kind: "thought", block: 1, text: "plan" },
      { type: "block-end", kind: "thought", block: 1, closed: true, at: pos(27, 2, 24) },
      { type: "block-start", kind: "response", block: 2, final: false, at: pos(28, 3, 1) },
      { type: "block-delta", kind: "response", block: 2, text: "done" },
      { type: "block-end", kind: "response", block: 2, closed: true, at: pos(67, 3, 40) },
    ]);
  });

  it("keeps the text of a block verbatim, whitespace included", () => {
    expect(blocks(parse("<thought>\n  two  lines\n</thought>"))).toEqual([
      "thought:\n  two  lines\n",
    ]);
  });

  it("drops whitespace-only text between blocks but keeps whitespace around real text", () => {
    const text = "\n\n<thought>a</thought>\n \n<response>b</response>\n\t\n";
    expect(blocks(parse(text))).toEqual(["thought:a", "response:b"]);
    const events = parse("<thought>a</thought>\n\n  Note <b>x</b>\n<response>b</response>");
    expect(blocks(events)).toEqual(["thought:a", "text:\n\n  Note <b>x</b>\n", "response:b"]);
    expect(events[3]).toEqual({ type: "block-start", kind: "text", block: 1, at: pos(20, 1, 21) });
  });

  it("defaults final to true and reads final in any case and quote style", () => {
    const finals = (text: string) =>
      parse(text).flatMap((e) =>
        e.type === "block-start" && e.kind === "response" ? [e.final] : [],
      );
    expect(finals("<response>x</response>")).toEqual([true]);
    expect(finals("<response final='FALSE'>x</response>")).toEqual([false]);
    expect(finals('<RESPONSE Final = "true" >x</Response>')).toEqual([true]);
    expect(finals("<response final=false>x</response>")).toEqual([false]);
  });

  it("reads a context feed's id; its content is raw, so tags inside it are text", () => {
    const events = parse(
      '<context_feed id="current_datetime">2024-06-15 <thought>x</thought> </action></context_feed>',
    );
    expect(events[0]).toMatchObject({
      type: "block-start",
      kind: "feed",
      feedId: "current_datetime",
    });
    expect(blocks(events)).toEqual(["feed:2024-06-15 <thought>x</thought> </action>"]);
    expect(errors(events)).toEqual([]);
  });

  it("accepts a self-closing block tag as an empty block that ends after its >", () => {
    expect(parse("<thought/><response final='false' />")).toEqual([
      { type: "block-start", kind: "thought", block: 0, at: pos(0, 1, 1) },
      { type: "block-end", kind: "thought", block: 0, closed: true, at: pos(10, 1, 11) },
      { type: "block-start", kind: "response", block: 1, final: false, at: pos(10, 1, 11) },
      { type: "block-end", kind: "response", block: 1, closed: true, at: pos(36, 1, 37) },
    ]);
  });
});

describe("what is a tag", () => {
  it.each([
    ["<div>hello</div>"],
    ["a < b and b > c"],
    ["<actionx>"],
    ["<thoughts>"],
    ["<3 you"],
    ["< thought>"],
    ["</ thought>"],
    ["</thought x>"],
    ["x<y"],
    ["<>"],
    ["<a href='x'>link</a>"],
  ])("%j is text", (text) => {
    expect(parse(text)).toEqual([
      { type: "block-start", kind: "text", block: 0, at: pos(0, 1, 1) },
      { type: "block-delta", kind: "text", block: 0, text },
      {
        type: "block-end",
        kind: "text",
        block: 0,
        closed: true,
        at: positionIn(text, text.length),
      },
    ]);
  });

  it("treats tag names and attribute names case-insensitively, with any spacing and order", () => {
    const text = `<THOUGHT>a</Thought ><Action\n  ID = 'x1'\tMODE="async"   TYPE='tool'\n>${BODY}</ACTION>`;
    const events = parse(text);
    expect(errors(events)).toEqual([]);
    expect(blocks(events)).toEqual(["thought:a"]);
    expect(actions(events)).toMatchObject([{ id: "x1", type: "tool", mode: "async" }]);
  });

  it("accepts unquoted attribute values", () => {
    const events = parse(`<action type=tool mode=sync id=a1>${BODY}</action>`);
    expect(actions(events)).toMatchObject([{ id: "a1", type: "tool", mode: "sync" }]);
  });

  it("inside a thought, a stray < is text and the thought goes on", () => {
    expect(blocks(parse("<thought>if a < b then <b>bold</b></thought>"))).toEqual([
      "thought:if a < b then <b>bold</b>",
    ]);
  });
});

describe("streaming", () => {
  it("emits each piece of text as soon as it is decided, holding back possible tags", () => {
    const parser = createProtocolParser();
    expect(parser.push("<thought>Hel")).toEqual([
      { type: "block-start", kind: "thought", block: 0, at: pos(0, 1, 1) },
      { type: "block-delta", kind: "thought", block: 0, text: "Hel" },
    ]);
    expect(parser.push("lo <ac")).toEqual([
      { type: "block-delta", kind: "thought", block: 0, text: "lo " },
    ]);
    expect(parser.push("e> x</thou")).toEqual([
      { type: "block-delta", kind: "thought", block: 0, text: "<ace> x" },
    ]);
    expect(parser.push("ght>")).toEqual([
      { type: "block-end", kind: "thought", block: 0, closed: true, at: pos(32, 1, 33) },
    ]);
    expect(parser.end()).toEqual([]);
  });

  it("never splits a surrogate pair between deltas", () => {
    const parser = createProtocolParser();
    const first = parser.push("<response>a\uD83D");
    expect(first.at(-1)).toEqual({ type: "block-delta", kind: "response", block: 0, text: "a" });
    expect(parser.push("\uDE00b")).toEqual([
      { type: "block-delta", kind: "response", block: 0, text: "😀b" },
    ]);
  });

  it("holds top-level whitespace back until text arrives, then starts the block where it began", () => {
    const parser = createProtocolParser();
    expect(parser.push("\n  ")).toEqual([]);
    expect(parser.push("  ")).toEqual([]);
    expect(parser.push("hi")).toEqual([
      { type: "block-start", kind: "text", block: 0, at: pos(0, 1, 1) },
      { type: "block-delta", kind: "text", block: 0, text: "\n    " },
      { type: "block-delta", kind: "text", block: 0, text: "hi" },
    ]);
  });

  it("counts positions in UTF-16 units with 1-based lines and columns, across chunks", () => {
    const text = "😀 é\n\n  <thought>x</thought>";
    for (const chunks of [[text], [...text]]) {
      const start = parseChunks(chunks).find((e) => e.type === "block-start" && e.block === 1);
      expect(start).toEqual({ type: "block-start", kind: "thought", block: 1, at: pos(8, 3, 3) });
    }
  });
});

describe("actions", () => {
  it("emits an action inside a thought at its close tag, with its thought as parent", () => {
    const text = `<thought>first\n<action type="tool" mode="async" id="fetchA">\n${BODY}\n</action>\nthen</thought>`;
    const events = parse(text);
    expect(events.map((e) => e.type)).toEqual([
      "block-start",
      "block-delta",
      "action",
      "block-delta",
      "block-end",
    ]);
    expect(events[2]).toEqual({
      type: "action",
      parentBlock: 0,
      action: {
        id: "fetchA",
        type: "tool",
        mode: "async",
        name: "web_scraper",
        parameters: { url: "https://example.com" },
        dependsOn: [],
        retry: 0,
        onError: "fail",
        inThought: true,
        span: { start: pos(15, 2, 1), end: positionIn(text, text.indexOf("</action>") + 9) },
      },
    });
    expect(blocks(events)).toEqual(["thought:first\n\nthen"]);
  });

  it("emits a top-level action between text blocks, with no parent", () => {
    const events = parse(`before <action type="agent" mode="sync" id="a">${BODY}</action> after`);
    expect(blocks(events)).toEqual(["text:before ", "text: after"]);
    const action = events.find((e) => e.type === "action");
    expect(action).toMatchObject({ action: { inThought: false } });
    expect(action).not.toHaveProperty("parentBlock");
  });

  it("reads every body field, in seconds for timeout, with null as absent", () => {
    const body = JSON.stringify({
      name: "data_analyzer",
      parameters: { webpage: "$webpage_data" },
      output_key: "analysis",
      depends_on: ["fetch1", "fetch2"],
      timeout: 30,
      retry: 3,
      on_error: "skip",
    });
    expect(
      actions(parse(`<action type="agent" mode="sync" id="analyze">${body}</action>`)),
    ).toEqual([
      {
        id: "analyze",
        type: "agent",
        mode: "sync",
        name: "data_analyzer",
        parameters: { webpage: "$webpage_data" },
        outputKey: "analysis",
        dependsOn: ["fetch1", "fetch2"],
        timeoutMs: 30_000,
        retry: 3,
        onError: "skip",
        inThought: false,
        span: expect.any(Object),
      },
    ]);
    const nulls =
      '{"name":"n","parameters":{},"output_key":null,"depends_on":null,"timeout":null,"retry":null,"on_error":null}';
    expect(
      actions(parse(`<action type="tool" mode="sync" id="n">${nulls}</action>`)),
    ).toMatchObject([{ dependsOn: [], retry: 0, onError: "fail" }]);
    const tiny = '{"name":"n","parameters":{},"timeout":0.0001}';
    expect(actions(parse(`<action type="tool" mode="sync" id="t">${tiny}</action>`))).toMatchObject(
      [{ timeoutMs: 1 }],
    );
  });

  it("ends the body at the first </action> outside a string: tags in JSON strings are body, <\\/action> too", () => {
    const body =
      '{"name":"n","parameters":{"html":"</response><thought>a<b</thought></action>","end":"<\\/action>"}}';
    const events = parse(
      `<thought><action type="tool" mode="sync" id="h">${body}</action>x</thought>`,
    );
    expect(errors(events)).toEqual([]);
    expect(actions(events)[0]!.parameters).toEqual({
      html: "</response><thought>a<b</thought></action>",
      end: "</action>",
    });
    expect(blocks(events)).toEqual(["thought:x"]);
  });

  it("accepts every action type and mode, case-insensitively", () => {
    for (const type of ["tool", "agent", "relic", "workflow", "llm", "internal", "TOOL"]) {
      for (const mode of ["sync", "async", "fire_and_forget", "Async"]) {
        const events = parse(`<action type="${type}" mode="${mode}" id="a">${BODY}</action>`);
        expect(actions(events)).toMatchObject([
          { type: type.toLowerCase(), mode: mode.toLowerCase() },
        ]);
      }
    }
  });

  it("passes knownIds on: an action reusing one is refused", () => {
    const events = parse(`<action type="tool" mode="sync" id="t1">${BODY}</action>`, {
      knownIds: ["t1"],
    });
    expect(actions(events)).toEqual([]);
    expect(errors(events)).toMatchObject([{ code: "protocol.duplicate-id", actionId: "t1" }]);
  });
});
