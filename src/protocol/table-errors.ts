import type { SourcePosition } from "./action-request.js";
import { insideString } from "./body-strings.js";
import type { OpenAction } from "./complete-action.js";
import type { ProtocolEvent } from "./protocol-event.js";
import { where } from "./protocol-problem.js";
import { type ScannedTag, TAG_NAME_OF, type TagName } from "./scanned-tag.js";
import type { InputClass, ParserState, TableErrorCode } from "./transition-table.js";

type ErrorEvent = Extract<ProtocolEvent, { type: "error" }>;

/** What a table error is about: the state and input of the transition that raised it. */
export interface TableErrorContext {
  state: ParserState;
  input: InputClass;
  tag: ScannedTag | undefined;
  /** The tag's `<`, or the end of the output. */
  at: SourcePosition;
  /** Where the open block began. */
  blockAt: SourcePosition;
  action: OpenAction | undefined;
}

/** The tag whose block or body is open in each state. */
const OPEN_TAG: { readonly [S in ParserState]: TagName | undefined } = {
  top: undefined,
  text: undefined,
  thought: "thought",
  response: "response",
  feed: "context_feed",
  action: "action",
  thoughtAction: "action",
};

const INSIDE_RULE: { readonly [S in ParserState]?: string } = {
  thought: "only <action> may sit inside a <thought>",
  response: "nothing may sit inside a <response>; put thoughts and actions before or after it",
};

const tagOf = (ctx: TableErrorContext): TagName =>
  ctx.input === "text" || ctx.input === "blank" || ctx.input === "end"
    ? "thought"
    : TAG_NAME_OF[ctx.input];

/**
 * The `error` event of each error the transition table raises, with a message that says what
 * was wrong and how to fix it.
 */
export const tableError: {
  readonly [C in TableErrorCode]: (ctx: TableErrorContext) => ErrorEvent;
} = {
  "protocol.misplaced-tag": (ctx) => {
    const open = OPEN_TAG[ctx.state] ?? "thought";
    const name = tagOf(ctx);
    return {
      type: "error",
      code: "protocol.misplaced-tag",
      message: `<${name}> at ${where(ctx.at)} cannot go inside <${open}> (opened at ${where(ctx.blockAt)}): ${INSIDE_RULE[ctx.state] ?? "it does not nest"}. The <${open}> was closed there as if </${open}> stood before <${name}>; write </${open}> yourself next time.`,
      at: ctx.at,
      expected: `</${open}>`,
    };
  },
  "protocol.unexpected-close": (ctx) => {
    const open = OPEN_TAG[ctx.state];
    const name = tagOf(ctx);
    return {
      type: "error",
      code: "protocol.unexpected-close",
      message: `</${name}> at ${where(ctx.at)} closes nothing: no <${name}> is open${open ? ` (the open block is the <${open}> from ${where(ctx.blockAt)})` : ""}. It was ignored; remove it, or open the block with <${name}> first.`,
      at: ctx.at,
      expected: open ? `</${open}>` : "text or an open tag",
    };
  },
  "protocol.unclosed-tag": (ctx) => {
    const open = OPEN_TAG[ctx.state] ?? "thought";
    if (open === "action") {
      const id = ctx.action?.tag.id;
      const inString =
        ctx.action !== undefined && insideString(ctx.action.lex)
          ? ' The output ended inside a JSON string of its body, and a </action> inside a string is part of the string: close every string with " before </action>.'
          : "";
      return {
        type: "error",
        code: "protocol.unclosed-tag",
        message: `<action${id === undefined ? "" : ` id="${id}"`}> opened at ${ctx.action ? where(ctx.action.start) : "?"} was never closed: the output ended first, so it did not run. End its JSON body with </action>.${inString}`,
        at: ctx.at,
        expected: "</action>",
        ...(id === undefined ? {} : { actionId: id }),
      };
    }
    return {
      type: "error",
      code: "protocol.unclosed-tag",
      message: `<${open}> opened at ${where(ctx.blockAt)} was never closed: the output ended first. End it with </${open}>.`,
      at: ctx.at,
      expected: `</${open}>`,
    };
  },
};

/** The error for an open tag that the end of the output cut short; the tag is dropped. */
export function cutOffTagError(tag: ScannedTag, at: SourcePosition): ErrorEvent {
  const name = TAG_NAME_OF[tag.input];
  return {
    type: "error",
    code: "protocol.unclosed-tag",
    message: `the output ended inside the <${name} tag at ${where(at)}, before its ">"; the tag was dropped. Finish every tag with ">".`,
    at,
    expected: '">"',
  };
}
