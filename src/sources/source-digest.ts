import { clipLine, compactCursor, formatBytes, rarestShapes } from "./line-shapes.js";
import type { SourceCursor, SourceDefinition } from "./source-types.js";

/**
 * One chunk as a digest sees it: its lines (read from the log or its artifact) and counts. A
 * chunk whose lines were not read for the digest (too much arrived at once) has `lines` empty
 * and `lineCount` set: it counts in the header and the matches, and is named as not read.
 */
export interface DigestChunk {
  n: number;
  lines: readonly string[];
  /** The lines the chunk holds, when `lines` does not hold them (not read for this digest). */
  lineCount?: number;
  /** Input bytes the chunk consumed. */
  bytes: number;
  /** The cursor after the chunk. */
  cursor: SourceCursor;
  skipped?: number;
  matches?: Record<string, number>;
  channel?: "stdout" | "stderr";
  /** The chunk event's time. */
  at: string;
}

/** What `renderSourceDigest` renders. */
export interface SourceDigestInput {
  source: string;
  definition: SourceDefinition | undefined;
  /** The chunks to digest, in order (consecutive `n`). */
  chunks: readonly DigestChunk[];
  /** The digest is never estimated above this many tokens. */
  budgetTokens: number;
  /** The runtime's token estimate of a text. */
  estimate: (text: string) => number;
  /** The cursor before the first chunk (the last one delivered), when known. */
  from?: SourceCursor;
}

/** The share of the lines' budget the relevant lines get when there are newest lines to show too. */
const RELEVANT_SHARE = 0.6;

/**
 * What an agent's step sees of a source's new chunks, estimated at most `budgetTokens` (an empty
 * string when not even its first line fits). It says which source and chunks n..m, their lines,
 * bytes and skipped lines, the cursor range, the lines matching each named pattern, and then:
 * every line, when they all fit; otherwise the most relevant lines (those matching a pattern, or
 * all when the source has none) grouped by shape (numbers, hex ids and UUIDs normalized), each
 * shape once with its count and chunk, rarest first, and the newest lines (of the chunks read:
 * chunks not read are named with their count). It ends with the `source.recall` action that
 * reads the range in full. Pure; the estimate is re-checked on the whole text, so an estimator
 * that is not additive (a real tokenizer) is never exceeded.
 */
export function renderSourceDigest(input: SourceDigestInput): string {
  const { chunks, budgetTokens, estimate } = input;
  const fits = (text: string) => estimate(text) <= budgetTokens;
  const header = headerLine(input);
  if (chunks.length === 0) return fits(header) ? header : "";
  const matches = matchesLine(input);
  const unread = unreadLine(chunks);
  const recall = recallLine(input.source, chunks[0]!.n, chunks.at(-1)!.n);
  const totalChars = chunks.reduce(
    (sum, chunk) => sum + chunk.lines.reduce((s, line) => s + line.length + 1, 0),
    0,
  );
  if (unread === undefined && totalChars <= budgetTokens * 64) {
    const all = join([header, matches, ...allLines(chunks), recall]);
    if (fits(all)) return all;
  }
  const cores = [
    [header, matches, unread, recall],
    [header, matches, recall],
    [header, matches],
    [header],
  ].map((parts) => parts.filter((part): part is string => part !== undefined));
  const core = cores.find((parts) => fits(join(parts)));
  if (!core) return truncateToFit(header, `Source ${input.source}`.length, fits);
  return fitSections(input, core, fits);
}

function join(parts: readonly (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined).join("\n");
}

/** The lines `chunk` holds, read or not. */
function lineCount(chunk: DigestChunk): number {
  return chunk.lineCount ?? chunk.lines.length;
}

/** Which chunks were not read for the digest, and what they hold; undefined when all were. */
function unreadLine(chunks: readonly DigestChunk[]): string | undefined {
  const unread = chunks.filter((chunk) => chunk.lineCount !== undefined);
  if (unread.length === 0) return undefined;
  const lines = unread.reduce((sum, chunk) => sum + lineCount(chunk), 0);
  const bytes = unread.reduce((sum, chunk) => sum + chunk.bytes, 0);
  const first = unread[0]!.n;
  const last = unread.at(-1)!.n;
  return `Not read for this digest (too much at once): ${unread.length} of these chunks (#${first}-#${last}), ${lines} lines, ${formatBytes(bytes)}; the counts above include them, source.recall reads them.`;
}

function headerLine({ source, definition, chunks, from }: SourceDigestInput): string {
  const what = definition ? ` (${definition.kind} ${clipLine(definition.target, 120)})` : "";
  if (chunks.length === 0) return `Source ${source}${what}: no new chunks.`;
  const first = chunks[0]!;
  const last = chunks.at(-1)!;
  const lines = chunks.reduce((sum, chunk) => sum + lineCount(chunk), 0);
  const bytes = chunks.reduce((sum, chunk) => sum + chunk.bytes, 0);
  const skipped = chunks.reduce((sum, chunk) => sum + (chunk.skipped ?? 0), 0);
  const range = first.n === last.n ? `chunk ${first.n}` : `chunks ${first.n}-${last.n}`;
  const start = from
    ? compactCursor(from)
    : first.n === 1
      ? "the start"
      : `after chunk ${first.n - 1}`;
  return `Source ${source}${what}: ${range}, ${lines} ${lines === 1 ? "line" : "lines"}, ${formatBytes(bytes)}${skipped > 0 ? `, ${skipped} ${skipped === 1 ? "line" : "lines"} skipped by its filter` : ""}; cursor ${start} -> ${compactCursor(last.cursor)}`;
}

function matchesLine({ definition, chunks }: SourceDigestInput): string | undefined {
  const totals: Record<string, number> = {};
  for (const name of Object.keys(definition?.patterns ?? {})) totals[name] = 0;
  for (const chunk of chunks) {
    for (const [name, count] of Object.entries(chunk.matches ?? {}))
      totals[name] = (totals[name] ?? 0) + count;
  }
  const entries = Object.entries(totals);
  if (entries.length === 0) return undefined;
  return `Matches: ${entries.map(([name, count]) => `${name} ${count}`).join(", ")}`;
}

function recallLine(source: string, from: number, to: number): string {
  const call = JSON.stringify({
    name: "source.recall",
    parameters: { source, from_chunk: from, to_chunk: to },
  });
  return `Read any range in full: <action type="internal" mode="sync" id="r1">${call}</action>`;
}

function chunkLabel(chunk: DigestChunk): string {
  return `#${chunk.n}${chunk.channel ? ` ${chunk.channel}` : ""}`;
}

function allLines(chunks: readonly DigestChunk[]): string[] {
  return chunks.flatMap((chunk) => [`--- chunk ${chunkLabel(chunk)} ---`, ...chunk.lines]);
}

/** The longest prefix of `text` that fits (a binary search on its length), or "" under `least`. */
function truncateToFit(text: string, least: number, fits: (text: string) => boolean): string {
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(`${text.slice(0, middle)}…`)) low = middle;
    else high = middle - 1;
  }
  return low < least ? "" : `${text.slice(0, low)}…`;
}

/** Pieces of one section, in priority order, each with its estimated cost. */
interface Section {
  title: (shown: number) => string;
  pieces: string[];
  costs: number[];
  chosen: number;
  /** Shown oldest-first (newest lines) rather than in priority order. */
  reversed: boolean;
  more: (shown: number) => string | undefined;
}

function fitSections(
  input: SourceDigestInput,
  core: string[],
  fits: (text: string) => boolean,
): string {
  const { estimate, budgetTokens } = input;
  const [relevant, newest] = sections(input);
  const sectionsOf = [relevant, newest];
  for (const section of sectionsOf)
    section.costs = section.pieces.map((piece) => estimate(`${piece}\n`));
  const render = () => {
    const body = sectionsOf.flatMap((section) => {
      if (section.chosen === 0) return [];
      const shown = section.pieces.slice(0, section.chosen);
      const more = section.more(section.chosen);
      if (section.reversed) return [section.title(section.chosen), more, ...shown.reverse()];
      return [section.title(section.chosen), ...shown, more];
    });
    return join([...core.slice(0, -1), ...body, core.at(-1)]);
  };
  const overhead = estimate(join([...core, relevant.title(0), newest.title(0), "(9999 more)"]));
  let left = budgetTokens - overhead;
  const take = (section: Section, limit: number) => {
    let spent = 0;
    while (section.chosen < section.pieces.length) {
      const cost = section.costs[section.chosen]!;
      if (spent + cost > limit || cost > left) break;
      spent += cost;
      left -= cost;
      section.chosen++;
    }
  };
  take(relevant, newest.pieces.length > 0 ? Math.floor(left * RELEVANT_SHARE) : left);
  take(newest, left);
  take(relevant, left);
  let text = render();
  while (!fits(text)) {
    const larger = relevant.chosen >= newest.chosen ? relevant : newest;
    if (larger.chosen === 0) return join(core);
    larger.chosen = Math.max(0, larger.chosen - Math.max(1, Math.ceil(larger.chosen / 8)));
    text = render();
  }
  return text;
}

function sections(input: SourceDigestInput): [Section, Section] {
  const { chunks, definition } = input;
  const patterns = Object.values(definition?.patterns ?? {}).flatMap((source) => {
    try {
      return [new RegExp(source)];
    } catch {
      return [];
    }
  });
  function* candidates() {
    for (const chunk of chunks) {
      for (const line of chunk.lines) {
        if (patterns.length === 0 || patterns.some((pattern) => pattern.test(line)))
          yield { line, chunk: chunk.n };
      }
    }
  }
  const shapes = rarestShapes(candidates());
  const relevant: Section = {
    title: () =>
      `Relevant lines (${patterns.length > 0 ? "matching a pattern, " : ""}one per shape, rarest first; count, chunk):`,
    pieces: shapes.map((shape) => `${shape.count}x #${shape.chunk}: ${clipLine(shape.example)}`),
    costs: [],
    chosen: 0,
    reversed: false,
    more: (shown) =>
      shown < shapes.length ? `(${shapes.length - shown} more shapes not shown)` : undefined,
  };
  const newestPieces: string[] = [];
  const total = chunks.reduce((sum, chunk) => sum + lineCount(chunk), 0);
  for (let c = chunks.length - 1; c >= 0 && newestPieces.length < 2_000; c--) {
    const chunk = chunks[c]!;
    for (let l = chunk.lines.length - 1; l >= 0 && newestPieces.length < 2_000; l--)
      newestPieces.push(`${chunkLabel(chunk)}: ${clipLine(chunk.lines[l]!)}`);
  }
  const newest: Section = {
    title: () => "Newest lines (chunk: line):",
    pieces: newestPieces,
    costs: [],
    chosen: 0,
    reversed: true,
    more: (shown) => (shown < total ? `(${total - shown} earlier lines not shown)` : undefined),
  };
  return [relevant, newest];
}
