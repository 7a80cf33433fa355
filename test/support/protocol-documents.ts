import fc from "fast-check";
import { expect } from "vitest";
import {
  type ActionRequest,
  coalesceDeltas,
  createProtocolParser,
  type ProtocolEvent,
  type ProtocolParserOptions,
  type SourcePosition,
} from "../../src/protocol/index.js";

/** Parses `chunks` as one output: every event of every push and of `end`, in order. */
export function parseChunks(
  chunks: readonly string[],
  options?: ProtocolParserOptions,
): ProtocolEvent[] {
  const parser = createProtocolParser(options);
  const events: ProtocolEvent[] = [];
  for (const chunk of chunks) events.push(...parser.push(chunk));
  events.push(...parser.end());
  return events;
}

/** Parses `text` in one push and merges adjacent deltas. */
export function parse(text: string, options?: ProtocolParserOptions): ProtocolEvent[] {
  return coalesceDeltas(parseChunks([text], options));
}

/** `text` cut into pieces of the given sizes, repeated until it is used up. */
export function chunkBySizes(text: string, sizes: readonly number[]): string[] {
  const chunks: string[] = [];
  for (let i = 0, k = 0; i < text.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length] ?? 1);
    chunks.push(text.slice(i, i + size));
    i += size;
  }
  return chunks;
}

/** `text` cut before each of the given offsets (taken modulo its length). */
export function chunkAt(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((cut) => (text.length === 0 ? 0 : cut % text.length)))]
    .filter((cut) => cut > 0)
    .sort((a, b) => a - b);
  const chunks: string[] = [];
  let last = 0;
  for (const point of points) {
    chunks.push(text.slice(last, point));
    last = point;
  }
  chunks.push(text.slice(last));
  return chunks;
}

/** A chunking plan for fast-check: sizes (1–12) or cut points. */
export const chunking = fc.oneof(
  fc
    .array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 8 })
    .map((sizes) => (text: string) => chunkBySizes(text, sizes)),
  fc.array(fc.nat(), { maxLength: 30 }).map((cuts) => (text: string) => chunkAt(text, cuts)),
);

/** The position of `offset` in `text`, counted the slow and obvious way. */
export function positionIn(text: string, offset: number): SourcePosition {
  const before = text.slice(0, offset);
  const lines = before.split("\n");
  return { offset, line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `text` holds half of a surrogate pair. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * Checks the structure every event sequence must have, whatever the input: blocks numbered from
 * 0 in order, one open at a time, every one ended, deltas non-empty and inside their block,
 * actions pointing at the open thought, block boundaries in output order.
 */
export function expectWellFormed(events: readonly ProtocolEvent[]): void {
  let next = 0;
  let open: { block: number; kind: string } | undefined;
  let lastOffset = 0;
  for (const event of events) {
    switch (event.type) {
      case "block-start":
        expect(open, "a block starts while another is open").toBeUndefined();
        expect(event.block).toBe(next++);
        expect(event.at.offset).toBeGreaterThanOrEqual(lastOffset);
        lastOffset = event.at.offset;
        open = { block: event.block, kind: event.kind };
        break;
      case "block-delta":
        expect(open).toEqual({ block: event.block, kind: event.kind });
        expect(event.text.length).toBeGreaterThan(0);
        break;
      case "block-end":
        expect(open).toEqual({ block: event.block, kind: event.kind });
        expect(event.at.offset).toBeGreaterThanOrEqual(lastOffset);
        lastOffset = event.at.offset;
        open = undefined;
        break;
      case "action":
        if (event.parentBlock === undefined) expect(event.action.inThought).toBe(false);
        else {
          expect(event.action.inThought).toBe(true);
          expect(open).toEqual({ block: event.parentBlock, kind: "thought" });
        }
        break;
      case "error":
        expect(event.message.length).toBeGreaterThan(10);
        expect(event.message.length).toBeLessThanOrEqual(2000);
        break;
    }
  }
  expect(open, "a block was never ended").toBeUndefined();
}

/** A generated output and exactly the (merged) events the parser must give for it. */
export interface ProtocolDocument {
  text: string;
  expected: ProtocolEvent[];
}

/** Text that is never a tag: stray `<`, HTML, look-alike names, unicode and emoji. */
const textAtom = fc.oneof(
  fc.constantFrom(
    "a < b",
    "<div>",
    "</div>",
    "<3",
    "<actionx>",
    "<thoughts>",
    "</responsex>",
    "< thought>",
    "</ thought>",
    "<b>bold</b>",
    '<a href="u">link</a>',
    "<context_feedx>",
    "<>",
    "</>",
    "x<y",
    "if (a<b) {}",
    "😀",
    "👩‍💻",
    "é",
    "\u00a0",
    "\n",
    " ",
    "\t",
    "word",
  ),
  fc.string({ unit: "grapheme", maxLength: 10 }).map((s) => s.replaceAll("<", "")),
);

const text = fc.array(textAtom, { maxLength: 6 }).map((atoms) => atoms.join(""));

/** Feed content is raw: tags of other kinds are text there. */
const feedText = fc
  .array(
    fc.oneof(
      textAtom,
      fc.constantFrom("<thought>", "</thought>", "<response>", "</action>", '<action id="x">'),
    ),
    { maxLength: 6 },
  )
  .map((atoms) => atoms.join(""));

/**
 * Strings inside an action's JSON body: any tag is a character there, `</action>` included (the
 * parser follows the body's strings), and so are quotes and backslashes (escaped by JSON).
 */
const bodyString = fc
  .array(
    fc.oneof(
      textAtom,
      fc.constantFrom(
        "</response>",
        "<thought>",
        "</thought>",
        "<action>",
        "<\\/action>",
        "</action>",
        "</Action >",
        '<response final="true">',
        '"',
        "\\",
        '\\"',
      ),
    ),
    { maxLength: 4 },
  )
  .map((atoms) => atoms.join(""));

const caseOf = (word: string) =>
  fc.constantFrom(word, word.toUpperCase(), word[0]!.toUpperCase() + word.slice(1));
const quoted = (value: string) =>
  fc.constantFrom(`"${value}"`, `'${value}'`, ...(/^[\w.:@-]+$/.test(value) ? [value] : []));
const space = fc.constantFrom(" ", "  ", "\n", " \t");

/** One attribute, written in any case, quote style and spacing. */
const attribute = (name: string, value: string) =>
  fc
    .tuple(space, caseOf(name), fc.constantFrom("=", " = "), quoted(value))
    .map(([s, n, eq, v]) => `${s}${n}${eq}${v}`);

const openTag = (name: string, attrs: fc.Arbitrary<string>[]) =>
  fc
    .tuple(caseOf(name), fc.tuple(...attrs), fc.constantFrom("", " ", "\n"))
    .chain(([n, list, end]) =>
      fc
        .shuffledSubarray(list, { minLength: list.length })
        .map((order) => `<${n}${order.join("")}${end}>`),
    );

const closeTag = (name: string) =>
  fc.tuple(caseOf(name), fc.constantFrom("", " ", "\n")).map(([n, s]) => `</${n}${s}>`);

interface ActionSpec {
  type: ActionRequest["type"];
  mode: ActionRequest["mode"];
  name: string;
  parameters: Record<string, unknown>;
  outputKey?: string;
  dependsOn?: string[];
  timeout?: number;
  retry?: number;
  onError?: ActionRequest["onError"];
  pretty: boolean;
}

const actionSpec: fc.Arbitrary<ActionSpec> = fc.record(
  {
    type: fc.constantFrom("tool", "agent", "relic", "workflow", "llm", "internal"),
    mode: fc.constantFrom("sync", "async", "fire_and_forget"),
    name: fc.constantFrom("web_scraper", "calculator", "add_context_feed"),
    parameters: fc.dictionary(
      fc.constantFrom("q", "url", "n"),
      fc.oneof(bodyString, fc.integer(), fc.constant(null)),
    ),
    outputKey: fc.constantFrom("out", "_x1"),
    dependsOn: fc.array(fc.constantFrom("a1", "fetch.2", "x:y"), { maxLength: 2 }),
    timeout: fc.constantFrom(0.5, 30, 1e-4),
    retry: fc.integer({ min: 0, max: 100 }),
    onError: fc.constantFrom("fail", "skip", "retry"),
    pretty: fc.boolean(),
  },
  { requiredKeys: ["type", "mode", "name", "parameters", "pretty"] },
) as fc.Arbitrary<ActionSpec>;

type Item =
  | { kind: "text"; text: string }
  | { kind: "action"; spec: ActionSpec; open: string; close: string };
type Segment =
  | { kind: "text"; text: string }
  | { kind: "thought"; open: string; close: string; items: Item[] }
  | { kind: "response"; open: string; close: string; final: boolean; text: string }
  | { kind: "feed"; open: string; close: string; feedId: string; text: string }
  | { kind: "action"; spec: ActionSpec; open: string; close: string };

/** Action ids are filled in when the document is assembled, so they are unique. */
const ID_SLOT = "IDSLOT";

const actionItem = actionSpec.chain((spec) =>
  fc
    .tuple(
      openTag("action", [
        attribute("id", ID_SLOT),
        attribute("type", spec.type),
        attribute("mode", spec.mode),
      ]),
      closeTag("action"),
    )
    .map(([open, close]) => ({ kind: "action" as const, spec, open, close })),
);

const segment: fc.Arbitrary<Segment> = fc.oneof(
  text.map((t) => ({ kind: "text" as const, text: t })),
  fc
    .tuple(
      openTag("thought", []),
      fc.array(
        fc.oneof(
          text.map((t) => ({ kind: "text" as const, text: t })),
          actionItem,
        ),
        { maxLength: 5 },
      ),
      closeTag("thought"),
    )
    .map(([open, items, close]) => ({ kind: "thought" as const, open, close, items })),
  fc
    .tuple(fc.constantFrom(undefined, true, false), text, closeTag("response"))
    .chain(([final, body, close]) =>
      (final === undefined
        ? openTag("response", [])
        : openTag("response", [attribute("final", String(final))])
      ).map((open) => ({
        kind: "response" as const,
        open,
        close,
        final: final ?? true,
        text: body,
      })),
    ),
  fc
    .tuple(fc.constantFrom("current_datetime", "f.2", "m@host"), feedText, closeTag("context_feed"))
    .chain(([feedId, body, close]) =>
      openTag("context_feed", [attribute("id", feedId)]).map((open) => ({
        kind: "feed" as const,
        open,
        close,
        feedId,
        text: body,
      })),
    ),
  actionItem,
);

/** Builds the text and the expected events of a list of segments. */
function assemble(segments: readonly Segment[]): ProtocolDocument {
  let out = "";
  const expected: ProtocolEvent[] = [];
  let block = 0;
  let ids = 0;
  let run: { start: number; text: string } | undefined;
  const at = (offset: number) => positionIn(out, offset);
  const flushRun = () => {
    if (run && !/^[\t\n\v\f\r ]*$/.test(run.text)) {
      const b = block++;
      expected.push({ type: "block-start", kind: "text", block: b, at: at(run.start) });
      expected.push({ type: "block-delta", kind: "text", block: b, text: run.text });
      expected.push({
        type: "block-end",
        kind: "text",
        block: b,
        closed: true,
        at: at(out.length),
      });
    }
    run = undefined;
  };
  const action = (item: { spec: ActionSpec; open: string; close: string }, parent?: number) => {
    const id = `a${++ids}`;
    const { spec } = item;
    const body: Record<string, unknown> = { name: spec.name, parameters: spec.parameters };
    if (spec.outputKey !== undefined) body.output_key = spec.outputKey;
    if (spec.dependsOn !== undefined) body.depends_on = spec.dependsOn;
    if (spec.timeout !== undefined) body.timeout = spec.timeout;
    if (spec.retry !== undefined) body.retry = spec.retry;
    if (spec.onError !== undefined) body.on_error = spec.onError;
    const start = out.length;
    out += `${item.open.replace(ID_SLOT, id)}${JSON.stringify(body, null, spec.pretty ? 2 : 0)}${item.close}`;
    const request: ActionRequest = {
      id,
      type: spec.type,
      mode: spec.mode,
      name: spec.name,
      parameters: spec.parameters,
      dependsOn: spec.dependsOn ?? [],
      retry: spec.retry ?? 0,
      onError: spec.onError ?? "fail",
      inThought: parent !== undefined,
      span: { start: at(start), end: at(out.length) },
    };
    if (spec.outputKey !== undefined) request.outputKey = spec.outputKey;
    if (spec.timeout !== undefined) request.timeoutMs = Math.ceil(spec.timeout * 1000);
    expected.push(
      parent === undefined
        ? { type: "action", action: request }
        : { type: "action", action: request, parentBlock: parent },
    );
  };
  const delta = (kind: "thought" | "response" | "feed", b: number, t: string) => {
    const last = expected[expected.length - 1];
    if (t === "") return;
    if (last?.type === "block-delta" && last.block === b) last.text += t;
    else expected.push({ type: "block-delta", kind, block: b, text: t });
  };
  for (const seg of segments) {
    if (seg.kind === "text") {
      run ??= { start: out.length, text: "" };
      run.text += seg.text;
      out += seg.text;
      continue;
    }
    flushRun();
    if (seg.kind === "action") {
      action(seg);
      continue;
    }
    const b = block++;
    const start = out.length;
    out += seg.open;
    if (seg.kind === "thought") {
      expected.push({ type: "block-start", kind: "thought", block: b, at: at(start) });
      for (const item of seg.items) {
        if (item.kind === "action") action(item, b);
        else {
          delta("thought", b, item.text);
          out += item.text;
        }
      }
    } else if (seg.kind === "response") {
      expected.push({
        type: "block-start",
        kind: "response",
        block: b,
        final: seg.final,
        at: at(start),
      });
      delta("response", b, seg.text);
      out += seg.text;
    } else {
      expected.push({
        type: "block-start",
        kind: "feed",
        block: b,
        feedId: seg.feedId,
        at: at(start),
      });
      delta("feed", b, seg.text);
      out += seg.text;
    }
    out += seg.close;
    expected.push({
      type: "block-end",
      kind: seg.kind,
      block: b,
      closed: true,
      at: at(out.length),
    });
  }
  flushRun();
  return { text: out, expected };
}

/**
 * Well-formed protocol outputs with their expected events: top-level text (with stray `<`, HTML,
 * look-alike tags, emoji), thoughts with nested actions, responses with and without `final`,
 * context feeds with raw tags inside, top-level actions; tags in any case, attributes in any
 * order, quote style and spacing; JSON bodies with `</response>` and `<thought>` in strings.
 */
export const protocolDocument: fc.Arbitrary<ProtocolDocument> = fc
  .array(segment, { maxLength: 8 })
  .map(assemble);
