import type { SourcePosition } from "./action-request.js";
import { BODY_START, nextBodyTag } from "./body-strings.js";
import {
  CELLS,
  CONTENT,
  CONTENT_DECIDE,
  INPUT,
  INPUTS,
  OP_BODY,
  OP_DELTA,
  OP_HOLD,
  OP_STEP,
  RECOGNIZED,
  STATE,
} from "./compiled-table.js";
import { completeAction, type OpenAction } from "./complete-action.js";
import { LineCursor } from "./line-cursor.js";
import type { BlockKind, ProtocolEvent } from "./protocol-event.js";
import { problemsToError } from "./protocol-problem.js";
import {
  isHighSurrogate,
  NEED_MORE,
  NOT_A_TAG,
  type Recognition,
  type ScannedTag,
} from "./scanned-tag.js";
import { cutOffTagError, tableError } from "./table-errors.js";
import {
  checkActionTag,
  checkFeedTag,
  checkResponseTag,
  checkThoughtTag,
  type PositionOf,
} from "./tag-attributes.js";
import { TagScanner } from "./tag-scanner.js";
import { type Opening, PARSER_STATES, type TagInput } from "./transition-table.js";

/** Options of `createProtocolParser`. */
export interface ProtocolParserOptions {
  /**
   * Action ids already taken in this step (native tool calls, or actions parsed before a
   * restart). An `<action>` that reuses one is a `protocol.duplicate-id` error, not a request.
   */
  knownIds?: Iterable<string>;
}

/**
 * An incremental parser of one model output (one step).
 *
 * Contract: pure and synchronous; `push` and `end` return the events their input decided, in
 * output order, and never throw on any input (malformed input becomes `error` events and parsing
 * goes on). Calling `push` or `end` after `end` is a programmer error and throws a `TypeError`.
 * After `end` every block that started has ended.
 */
export interface ProtocolParser {
  /** Feeds the next piece of output; returns what it decided (possibly nothing). */
  push(chunk: string): ProtocolEvent[];
  /** Ends the output: decides what was held back, closes what is open (with errors). */
  end(): ProtocolEvent[];
}

/**
 * Creates a parser for one model output. See `docs/protocol.md` for the syntax, the nesting
 * rules and the event vocabulary.
 *
 * Guarantees: any chunking of the same output gives the same events once adjacent deltas of
 * one block are merged, with the same positions; no delta holds a fragment of a protocol tag or
 * half of a surrogate pair; only `<thought>`, `<action>`, `<response>` and `<context_feed>`
 * (and their close tags) are tags, anything else is text.
 */
export function createProtocolParser(options: ProtocolParserOptions = {}): ProtocolParser {
  return new StreamingParser(options);
}

/** The close tag of each block kind that has one. */
const CLOSE_OF: { readonly [K in BlockKind]: TagInput | undefined } = {
  text: undefined,
  thought: "close-thought",
  response: "close-response",
  feed: "close-feed",
};
const CLOSE_INDEX: { readonly [K in BlockKind]: number } = {
  text: -1,
  thought: INPUT["close-thought"],
  response: INPUT["close-response"],
  feed: INPUT["close-feed"],
};

const TOP = STATE.top;
const THOUGHT_ACTION = STATE.thoughtAction;
const ACTION = STATE.action;
const TEXT_INPUT = INPUT.text;
const BLANK_INPUT = INPUT.blank;
const END_INPUT = INPUT.end;

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);

class StreamingParser implements ProtocolParser {
  /** The state (index into `PARSER_STATES`), how it handles content, the tags it knows. */
  private state = TOP;
  private mode = CONTENT[TOP]!;
  private rec: Recognition = RECOGNIZED[TOP]!;
  private ended = false;
  /** Input held back at the end of the last push: an undecided tag or half a surrogate pair. */
  private carry = "";
  /** The text being scanned (carry + chunk), and positions in it. */
  private s = "";
  private readonly cursor = new LineCursor();

  private blocks = 0;
  private block = -1;
  private kind: BlockKind = "text";
  private blockAt: SourcePosition = { offset: 0, line: 1, column: 1 };
  /** The content run being dispatched. */
  private runFrom = 0;
  private runEnd = 0;
  /** Top-level whitespace waiting for non-whitespace. */
  private held = "";
  private heldAt: SourcePosition | undefined;
  private action: OpenAction | undefined;
  private readonly ids = new Map<string, SourcePosition | undefined>();
  private out: ProtocolEvent[] = [];
  private readonly scanner = new TagScanner();
  private readonly posOf: PositionOf = (index) => this.pos(index);

  constructor(options: ProtocolParserOptions) {
    for (const id of options.knownIds ?? []) this.ids.set(id, undefined);
  }

  push(chunk: string): ProtocolEvent[] {
    if (this.ended) {
      throw new TypeError("ProtocolParser.push() after end(): create a new parser per output");
    }
    if (typeof chunk !== "string") {
      throw new TypeError(`ProtocolParser.push() takes a string, not ${typeof chunk}`);
    }
    const out: ProtocolEvent[] = [];
    this.out = out;
    const n = chunk.length;
    if (n === 0) return out;
    if (this.carry.length === 0 && this.mode !== CONTENT_DECIDE && chunk.indexOf("<") === -1) {
      // The common case, kept short: a chunk of plain content inside a block or a body.
      const last = chunk.charCodeAt(n - 1);
      if (!isHighSurrogate(last)) {
        if (this.mode === OP_DELTA) {
          out.push({ type: "block-delta", kind: this.kind, block: this.block, text: chunk });
        } else {
          this.action!.parts.push(chunk);
          nextBodyTag(chunk, 0, this.action!);
        }
        this.cursor.skip(chunk);
        return out;
      }
    }
    const s = this.carry.length === 0 ? chunk : this.carry + chunk;
    const keep = this.scan(s, false);
    this.cursor.commit(keep);
    this.carry = keep === s.length ? "" : s.slice(keep);
    return out;
  }

  end(): ProtocolEvent[] {
    if (this.ended) throw new TypeError("ProtocolParser.end() called twice");
    this.ended = true;
    const out: ProtocolEvent[] = [];
    this.out = out;
    this.scan(this.carry, true);
    this.carry = "";
    this.dispatch(END_INPUT, undefined);
    return out;
  }

  /** Scans `s`; returns the index from which it must be held back (its length: nothing). */
  private scan(s: string, atEnd: boolean): number {
    this.s = s;
    this.cursor.begin(s);
    const n = s.length;
    let i = 0;
    let from = 0;
    for (;;) {
      // In an action body, a "<" inside a JSON string is a character, never a tag.
      const lt = this.mode === OP_BODY ? nextBodyTag(s, from, this.action!) : s.indexOf("<", from);
      if (lt === -1) return this.content(i, n, atEnd);
      const tag = this.scanner.scan(s, lt, this.rec, atEnd);
      if (tag === NOT_A_TAG) {
        from = lt + 1;
        continue;
      }
      this.content(i, lt, true);
      if (tag === NEED_MORE) return lt;
      if (tag.cutOff) {
        this.out.push(cutOffTagError(tag, this.pos(tag.start)));
      } else this.dispatch(tag.index, tag);
      i = from = tag.end;
    }
  }

  /**
   * Handles the content `s[from, to)`. Unless `closed` (a tag or the end follows it), a trailing
   * high surrogate waits for its pair. Returns where the held-back part starts.
   */
  private content(from: number, to: number, closed: boolean): number {
    const s = this.s;
    let end = to;
    if (!closed && end > from && this.mode !== OP_BODY) {
      const c = s.charCodeAt(end - 1);
      if (isHighSurrogate(c)) end--;
    }
    if (end > from) {
      const text = from === 0 && end === s.length ? s : s.slice(from, end);
      if (this.mode === OP_DELTA) {
        this.out.push({ type: "block-delta", kind: this.kind, block: this.block, text });
      } else if (this.mode === OP_BODY) this.action!.parts.push(text);
      else {
        let blank = true;
        for (let k = from; k < end; k++) {
          if (!isSpace(s.charCodeAt(k))) {
            blank = false;
            break;
          }
        }
        this.runFrom = from;
        this.runEnd = end;
        this.dispatch(blank ? BLANK_INPUT : TEXT_INPUT, undefined);
      }
    }
    return end;
  }

  /** Runs the table's transition for `input` (and again, while the cell says so). */
  private dispatch(input: number, tag: ScannedTag | undefined): void {
    for (;;) {
      const cell = CELLS[this.state * INPUTS + input]!;
      if (cell.op !== OP_STEP) {
        // Only content reaches a non-step cell: the scanner hands over recognised tags only.
        const text = this.s.slice(this.runFrom, this.runEnd);
        if (cell.op === OP_DELTA) this.delta(text);
        else if (cell.op === OP_BODY) this.action!.parts.push(text);
        else if (cell.op === OP_HOLD) {
          this.heldAt ??= this.pos(this.runFrom);
          this.held += text;
        }
        return;
      }
      if (this.state === TOP && input !== TEXT_INPUT) {
        this.held = "";
        this.heldAt = undefined;
      }
      if (cell.error) {
        this.out.push(
          tableError[cell.error]({
            state: PARSER_STATES[this.state]!,
            input: tag?.input ?? (input === END_INPUT ? "end" : "text"),
            tag,
            at: tag ? this.pos(tag.start) : this.pos(this.s.length),
            blockAt: this.blockAt,
            action: this.action,
          }),
        );
      }
      if (cell.finish !== 0) this.finish(cell.finish === 1, input, tag);
      this.state = cell.next;
      this.mode = CONTENT[cell.next]!;
      this.rec = RECOGNIZED[cell.next]!;
      if (cell.start) this.start(cell.start, tag);
      if (!cell.again) return;
    }
  }

  private delta(text: string): void {
    this.out.push({ type: "block-delta", kind: this.kind, block: this.block, text });
  }

  /** Ends the open block, or completes or drops the open action. */
  private finish(closed: boolean, input: number, tag: ScannedTag | undefined): void {
    if (this.state === ACTION || this.state === THOUGHT_ACTION) {
      const action = this.action!;
      this.action = undefined;
      if (closed && tag) {
        this.out.push(completeAction(action, this.pos(tag.end), this.ids));
      }
      return;
    }
    const at =
      tag === undefined
        ? this.pos(this.s.length)
        : input === CLOSE_INDEX[this.kind]
          ? this.pos(tag.end)
          : this.pos(tag.start);
    this.out.push({ type: "block-end", kind: this.kind, block: this.block, closed, at });
  }

  /** Starts a block or an action; a self-closing tag (`<thought/>`) also closes it at once. */
  private start(opening: Opening, tag: ScannedTag | undefined): void {
    if (opening === "text") {
      const at = this.heldAt ?? this.pos(this.runFrom);
      this.open("text", at);
      this.out.push({ type: "block-start", kind: "text", block: this.block, at });
      if (this.held.length > 0) this.delta(this.held);
      this.held = "";
      this.heldAt = undefined;
      return;
    }
    const t = tag!;
    const at = this.pos(t.start);
    switch (opening) {
      case "thought": {
        const problems = checkThoughtTag(t, this.posOf);
        if (problems.length > 0) this.out.push(problemsToError(problems));
        this.open("thought", at);
        this.out.push({ type: "block-start", kind: "thought", block: this.block, at });
        break;
      }
      case "response": {
        const { final, problems } = checkResponseTag(t, this.posOf);
        if (problems.length > 0) this.out.push(problemsToError(problems));
        this.open("response", at);
        this.out.push({ type: "block-start", kind: "response", block: this.block, final, at });
        break;
      }
      case "feed": {
        const { feedId, problems } = checkFeedTag(t, this.posOf);
        if (problems.length > 0) this.out.push(problemsToError(problems));
        this.open("feed", at);
        this.out.push({ type: "block-start", kind: "feed", block: this.block, feedId, at });
        break;
      }
      case "action": {
        const inThought = this.state === THOUGHT_ACTION;
        this.action = {
          tag: checkActionTag(t, this.posOf),
          start: at,
          bodyStart: this.pos(t.end),
          parts: [],
          lex: BODY_START,
          inThought,
          parentBlock: inThought ? this.block : undefined,
        };
        break;
      }
    }
    if (t.selfClosing) {
      const close = opening === "action" ? "close-action" : CLOSE_OF[opening];
      this.dispatch(INPUT[close!], t);
    }
  }

  private open(kind: BlockKind, at: SourcePosition): void {
    this.block = this.blocks++;
    this.kind = kind;
    this.blockAt = at;
  }

  /** The position of index `index` of the scanned text. */
  private pos(index: number): SourcePosition {
    return this.cursor.pos(index);
  }
}
