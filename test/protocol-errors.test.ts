import { describe, expect, it } from "vitest";
import {
  PROTOCOL_ERROR_CODES,
  type ProtocolErrorCode,
  type ProtocolEvent,
} from "../src/protocol/index.js";
import { chunkBySizes, parse, parseChunks, positionIn } from "./support/protocol-documents.js";

type ErrorEvent = Extract<ProtocolEvent, { type: "error" }>;

const BODY = '{"name":"x","parameters":{}}';
const act = (attrs: string, body = BODY) => `<action ${attrs}>${body}</action>`;

const errorsOf = (events: readonly ProtocolEvent[]) =>
  events.filter((event): event is ErrorEvent => event.type === "error");

/** The one error `text` gives (in one push and in 1-character chunks alike). */
function theError(text: string): ErrorEvent {
  const errors = errorsOf(parse(text));
  expect(errors).toHaveLength(1);
  expect(errorsOf(parseChunks(chunkBySizes(text, [1])))).toEqual(errors);
  return errors[0]!;
}

const summary = (events: readonly ProtocolEvent[]) =>
  events.map((event) =>
    event.type === "error"
      ? event.code
      : event.type === "action"
        ? `action ${event.action.id}`
        : event.type === "block-delta"
          ? `${event.kind} ${JSON.stringify(event.text)}`
          : event.type === "block-end"
            ? `end ${event.kind}${event.closed ? "" : " (cut)"}`
            : `start ${event.kind}`,
  );

/** One input per code, each giving exactly that one error. */
const EXAMPLES: { [C in ProtocolErrorCode]: string } = {
  "protocol.unclosed-tag": "<thought>never closed",
  "protocol.unexpected-close": "text </response>",
  "protocol.bad-attribute": '<response final="maybe">x</response>',
  "protocol.missing-attribute": act('type="tool" mode="sync"'),
  "protocol.unknown-action-type": act('type="context_feed" mode="sync" id="f1"'),
  "protocol.unknown-mode": act('type="tool" mode="later" id="m1"'),
  "protocol.bad-action-body": act('type="tool" mode="sync" id="b1"', "{name: x}"),
  "protocol.duplicate-id": `${act('type="tool" mode="sync" id="d"')}${act('type="tool" mode="async" id="d"')}`,
  "protocol.misplaced-tag": "<thought>a<response>b</response>",
};

describe("every error code", () => {
  it.each(PROTOCOL_ERROR_CODES.map((code) => [code, EXAMPLES[code]]))(
    "%s: one error, a message that says how to fix it, and parsing goes on",
    (code, text) => {
      const error = theError(text);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(/\d+:\d+/);
      expect(error.message.length).toBeLessThanOrEqual(2000);
      expect(error.expected).toBeTruthy();
      const events = parse(`${text}</thought>\n<response>after</response>`);
      expect(events.at(-2)).toMatchObject({ type: "block-delta", text: "after" });
    },
  );
});

describe("protocol.unclosed-tag", () => {
  it("reports a block the output never closed at the end, then ends it with closed: false", () => {
    const text = "<thought>abc";
    const events = parse(text);
    expect(summary(events)).toEqual([
      "start thought",
      'thought "abc"',
      "protocol.unclosed-tag",
      "end thought (cut)",
    ]);
    expect(events[2]).toMatchObject({
      at: positionIn(text, 12),
      expected: "</thought>",
      message: expect.stringContaining("opened at 1:1"),
    });
  });

  it("reports an unclosed action inside a thought, then the thought; the action does not run", () => {
    const events = parse(`<thought>x<action type="tool" mode="sync" id="a1">${BODY}`);
    expect(summary(events)).toEqual([
      "start thought",
      'thought "x"',
      "protocol.unclosed-tag",
      "protocol.unclosed-tag",
      "end thought (cut)",
    ]);
    expect(events[2]).toMatchObject({ actionId: "a1", expected: "</action>" });
    expect((events[2] as ErrorEvent).message).toContain("did not run");
  });

  it("drops an open tag that the end of the output cut short", () => {
    const error = theError('<response final="fa');
    expect(error).toMatchObject({ code: "protocol.unclosed-tag", expected: '">"' });
    expect(parse('<response final="fa').filter((e) => e.type !== "error")).toEqual([]);
  });
});

describe("protocol.unexpected-close", () => {
  it("ignores a close tag that closes nothing, at the top level and inside a block", () => {
    expect(summary(parse("a</thought>b"))).toEqual([
      "start text",
      'text "a"',
      "end text",
      "protocol.unexpected-close",
      "start text",
      'text "b"',
      "end text",
    ]);
    const events = parse("<thought>a</action>b</response>c</thought>");
    expect(summary(events)).toEqual([
      "start thought",
      'thought "a"',
      "protocol.unexpected-close",
      'thought "b"',
      "protocol.unexpected-close",
      'thought "c"',
      "end thought",
    ]);
    expect(events[2]).toMatchObject({ expected: "</thought>", at: { offset: 10 } });
  });
});

describe("attributes", () => {
  it.each([
    ['<thought x="1">a</thought>', "protocol.bad-attribute", "takes no attributes"],
    ['<response final="maybe">a</response>', "protocol.bad-attribute", 'must be "true" or "false"'],
    ["<response final>a</response>", "protocol.bad-attribute", "has no value"],
    ['<response final="false>a</response>', "protocol.bad-attribute", "no closing quote"],
    [act('type="tool" type="agent" mode="sync" id="a"'), "protocol.bad-attribute", "appears twice"],
    [
      act('type="tool" mode="sync" id="has space"'),
      "protocol.bad-attribute",
      "not a valid action id",
    ],
    [
      act('type="tool" mode="sync" id="a" depends_on="b"'),
      "protocol.bad-attribute",
      "in the JSON body",
    ],
    [
      act('type="tool" mode="sync" id="a" colour="red"'),
      "protocol.bad-attribute",
      "its attributes are type, mode, id",
    ],
    [act('type="tool" mode="sync"'), "protocol.missing-attribute", 'add id="…"'],
    [act('mode="sync" id="a"'), "protocol.missing-attribute", 'add type="…"'],
    [act('type="tool" id="a"'), "protocol.missing-attribute", 'add mode="…"'],
    ["<context_feed>x</context_feed>", "protocol.missing-attribute", 'add id="…"'],
    ['<context_feed id="no way">x</context_feed>', "protocol.bad-attribute", "not a valid feed id"],
    [
      act('type="context_feed" mode="sync" id="a"'),
      "protocol.unknown-action-type",
      'type="internal"',
    ],
    [act('type="search" mode="sync" id="a"'), "protocol.unknown-action-type", "one of tool, agent"],
    [
      act('type="tool" mode="fire-and-forget" id="a"'),
      "protocol.unknown-mode",
      'did you mean "fire_and_forget"',
    ],
  ])("%s → %s", (text, code, fix) => {
    const error = theError(text);
    expect(error.code).toBe(code);
    expect(error.message).toContain(fix);
  });

  it("keeps the block of a tag with a bad attribute, with the default in force", () => {
    expect(summary(parse('<response final="maybe">a</response>'))).toEqual([
      "protocol.bad-attribute",
      "start response",
      'response "a"',
      "end response",
    ]);
    expect(parse("<response final>a</response>")[1]).toMatchObject({ final: true });
    expect(parse("<context_feed>x</context_feed>")[1]).toMatchObject({ feedId: "" });
  });

  it("ends a malformed tag at its last good attribute and reports where it broke", () => {
    const text = `<action type="tool" mode="sync" id="a1"\n${BODY}\n</action>`;
    const error = theError(text);
    expect(error).toMatchObject({
      code: "protocol.bad-attribute",
      at: { line: 2, column: 1 },
      actionId: "a1",
    });
    expect(error.message).toContain('found "{"');
    expect(error.message).toContain("did not run");
    expect(summary(parse(text))).toEqual(["protocol.bad-attribute"]);
  });

  it("reports every problem of one action in one error, the first one's code first", () => {
    const error = theError(act('type="foo" mode="later" id="x"', "{}"));
    expect(error.code).toBe("protocol.unknown-action-type");
    expect(error.message).toContain("Also:");
    expect(error.message).toContain('mode="later"');
    expect(error.message).toContain("name is missing");
  });
});

describe("protocol.bad-action-body", () => {
  it("says where the JSON breaks, as a position in the output", () => {
    const text = `<thought>\n${act('type="tool" mode="sync" id="j"', '\n{\n  "name": "x", // the tool\n  "parameters": {}\n}\n')}</thought>`;
    const error = theError(text);
    expect(error).toMatchObject({
      code: "protocol.bad-action-body",
      at: positionIn(text, text.indexOf("//")),
      actionId: "j",
    });
    expect(error.message).toContain("JSON has no comments");
    expect(error.message).toContain(`at 4:16`);
  });

  it.each([
    ['{"name":"x","parameters":{},}', "no trailing comma"],
    ['{"name":"x","parameters":{"a":[1,]}}', "no trailing comma"],
    ["  ", "is empty"],
    ['{"name":"x","parameters":{}} extra', "nothing after the JSON value"],
    [
      '{"name":"x","parameters":{"s":"unterminated}\n',
      'or the closing " at 1:84, found a line break',
    ],
    ["[1, 2]", "must be a JSON object, not an array"],
    ['{"parameters":{}}', "name is missing"],
    ['{"name":"x"}', "parameters is missing"],
    ['{"name":"x","parameters":[]}', "parameters must be a JSON object"],
    ['{"name":"","parameters":{}}', "name must be a non-empty string"],
    ['{"name":"x","parameters":{},"retry":1.5}', "retry must be a whole number"],
    ['{"name":"x","parameters":{},"retry":101}', "retry must be a whole number"],
    ['{"name":"x","parameters":{},"timeout":0}', "timeout must be a positive number of seconds"],
    [
      '{"name":"x","parameters":{},"on_error":"ignore"}',
      "on_error must be one of fail, skip, retry",
    ],
    ['{"name":"x","parameters":{},"output_key":"my key"}', "output_key must be a variable name"],
    ['{"name":"x","parameters":{},"depends_on":"a1"}', "depends_on must be an array of action ids"],
    [
      '{"name":"x","parameters":{},"depends_on":["a1","not ok"]}',
      "depends_on[1] must be an action id",
    ],
    ['{"name":"x","parameters":{},"id":"a","extra":1}', 'unknown fields "id", "extra"'],
  ])("%s → %s", (body, fix) => {
    const error = theError(act('type="tool" mode="sync" id="b"', body));
    expect(error.code).toBe("protocol.bad-action-body");
    expect(error.message).toContain(fix);
    expect(error.actionId).toBe("b");
  });
});

describe("protocol.duplicate-id", () => {
  it("refuses a second action with the same id and points at the first", () => {
    const text = `${act('type="tool" mode="sync" id="d"')}\n${act('type="tool" mode="async" id="d"')}`;
    const events = parse(text);
    expect(summary(events)).toEqual(["action d", "protocol.duplicate-id"]);
    expect(events[1]).toMatchObject({ actionId: "d", at: { line: 2, column: 1 } });
    expect((events[1] as ErrorEvent).message).toContain("already used by the action at 1:1");
  });

  it("lets a corrected action reuse the id of a rejected one", () => {
    const text = `${act('type="tool" mode="sync" id="d"', "{}")}${act('type="tool" mode="sync" id="d"')}`;
    expect(summary(parse(text))).toEqual(["protocol.bad-action-body", "action d"]);
  });
});

describe("protocol.misplaced-tag", () => {
  it("closes the open block (closed: false) and handles the tag at the top level", () => {
    expect(summary(parse("<thought>a<response>b</response>"))).toEqual([
      "start thought",
      'thought "a"',
      "protocol.misplaced-tag",
      "end thought (cut)",
      "start response",
      'response "b"',
      "end response",
    ]);
    expect(summary(parse("<thought>a<thought>b</thought>"))).toEqual([
      "start thought",
      'thought "a"',
      "protocol.misplaced-tag",
      "end thought (cut)",
      "start thought",
      'thought "b"',
      "end thought",
    ]);
    expect(summary(parse('<thought>a<context_feed id="f">b</context_feed>'))).toEqual([
      "start thought",
      'thought "a"',
      "protocol.misplaced-tag",
      "end thought (cut)",
      "start feed",
      'feed "b"',
      "end feed",
    ]);
  });

  it("runs an action written inside a response as a top-level action", () => {
    const events = parse(`<response>a${act('type="tool" mode="sync" id="r"')}b</response>`);
    expect(summary(events)).toEqual([
      "start response",
      'response "a"',
      "protocol.misplaced-tag",
      "end response (cut)",
      "action r",
      "start text",
      'text "b"',
      "end text",
      "protocol.unexpected-close",
    ]);
    expect(events[2]).toMatchObject({ expected: "</response>", at: { offset: 11 } });
  });
});
