import type { SplitLine } from "./line-splitter.js";
import type {
  SourceChunkEmission,
  SourceCursor,
  SourceDefinition,
  SourceFilter,
} from "./source-types.js";

/** A pattern that matches nothing: what a regular expression that fails to compile becomes. */
const NEVER = /(?!)/;

/** Compiles one regular expression as written; one that fails to compile matches nothing. */
function compilePattern(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch {
    return NEVER;
  }
}

/**
 * A definition's `include` and `exclude` patterns, compiled. A pattern that fails to compile
 * (the manifest parser rejects those first) matches nothing rather than throwing.
 */
export function compileFilter(
  definition: Pick<SourceDefinition, "include" | "exclude">,
): SourceFilter {
  return {
    include: definition.include.map(compilePattern),
    exclude: definition.exclude.map(compilePattern),
  };
}

/** Whether `filter` keeps `text`: some include matches (or there are none) and no exclude does. */
export function filterKeeps(filter: SourceFilter, text: string): boolean {
  if (filter.include.length > 0 && !filter.include.some((pattern) => pattern.test(text))) {
    return false;
  }
  return !filter.exclude.some((pattern) => pattern.test(text));
}

/**
 * Gathers lines into chunks by a definition's batching, filter and patterns.
 *
 * A chunk ends when it holds `maxLines` kept lines or its `bytes` (input bytes of every line
 * read, skipped ones included, newlines included) reach `maxBytes`: so a chunk never holds more
 * than `maxLines` kept lines nor more than `maxBytes` plus one line of bytes, and a stream of
 * skipped lines still moves its cursor in chunks that may hold no line. Lines of different
 * channels never share a chunk. Pure and synchronous: no timers, no clock (`maxWaitMs` is the
 * adapter's to keep, by calling `flush`). Never throws.
 */
export class ChunkBatcher {
  readonly #maxLines: number;
  readonly #maxBytes: number;
  readonly #filter: SourceFilter;
  readonly #patterns: readonly (readonly [string, RegExp])[];
  #lines: string[] = [];
  #read = 0;
  #bytes = 0;
  #skipped = 0;
  #cutLines = 0;
  #cutBytes = 0;
  #invalid = 0;
  #matches: number[] = [];
  #cursor: SourceCursor = {};
  #channel: "stdout" | "stderr" | undefined;
  /** A chunk completed by a line that arrived on a new channel, while add returned the old one. */
  #ready: SourceChunkEmission | undefined;

  constructor(definition: Pick<SourceDefinition, "batching" | "include" | "exclude" | "patterns">) {
    this.#maxLines = Math.max(1, Math.floor(definition.batching.maxLines) || 1);
    this.#maxBytes = Math.max(1, Math.floor(definition.batching.maxBytes) || 1);
    this.#filter = compileFilter(definition);
    this.#patterns = Object.entries(definition.patterns).map(
      ([name, source]) => [name, compilePattern(source)] as const,
    );
    this.#matches = this.#patterns.map(() => 0);
  }

  /**
   * Adds one line read, with the cursor after it; returns the chunk this line completed, if it
   * completed one. A line on another channel than the held ones first ends their chunk, which is
   * what it returns; should the new line complete a chunk of its own too, that one waits for the
   * next `add` or `flush` (`ready` says so).
   */
  add(
    line: SplitLine,
    cursor: SourceCursor,
    channel?: "stdout" | "stderr",
  ): SourceChunkEmission | undefined {
    let out = this.#ready;
    this.#ready = undefined;
    if (out === undefined && this.#read > 0 && channel !== this.#channel) out = this.#take();
    this.#append(line, cursor, channel);
    if (this.#lines.length < this.#maxLines && this.#bytes < this.#maxBytes) return out;
    const done = this.#take();
    if (out === undefined) return done;
    this.#ready = done;
    return out;
  }

  /** The chunk held so far, or undefined when nothing was read since the last one. */
  flush(): SourceChunkEmission | undefined {
    if (this.#ready !== undefined) {
      const ready = this.#ready;
      this.#ready = undefined;
      return ready;
    }
    return this.#read > 0 ? this.#take() : undefined;
  }

  /** Whether lines (kept or skipped) are held. */
  get holding(): boolean {
    return this.#ready !== undefined || this.#read > 0;
  }

  /** Whether a completed chunk waits for `flush` (only after a channel change; see `add`). */
  get ready(): boolean {
    return this.#ready !== undefined;
  }

  #append(line: SplitLine, cursor: SourceCursor, channel: "stdout" | "stderr" | undefined): void {
    if (this.#read === 0) this.#channel = channel;
    this.#read++;
    this.#bytes += line.bytes;
    this.#cursor = cursor;
    if (!filterKeeps(this.#filter, line.text)) {
      this.#skipped++;
      return;
    }
    this.#lines.push(line.text);
    if (line.cut > 0) {
      this.#cutLines++;
      this.#cutBytes += line.cut;
    }
    this.#invalid += line.invalid;
    for (let index = 0; index < this.#patterns.length; index++) {
      if (this.#patterns[index]![1].test(line.text)) this.#matches[index]!++;
    }
  }

  /** The held lines as a chunk; resets. */
  #take(): SourceChunkEmission {
    const chunk: SourceChunkEmission = {
      type: "chunk",
      lines: this.#lines,
      bytes: this.#bytes,
      cursor: this.#cursor,
    };
    if (this.#channel !== undefined) chunk.channel = this.#channel;
    if (this.#skipped > 0) chunk.skipped = this.#skipped;
    if (this.#cutLines > 0) chunk.cut = { lines: this.#cutLines, bytes: this.#cutBytes };
    if (this.#invalid > 0) chunk.invalidBytes = this.#invalid;
    if (this.#patterns.length > 0) {
      chunk.matches = Object.fromEntries(
        this.#patterns.map(([name], index) => [name, this.#matches[index]!]),
      );
    }
    this.#lines = [];
    this.#read = 0;
    this.#bytes = 0;
    this.#skipped = 0;
    this.#cutLines = 0;
    this.#cutBytes = 0;
    this.#invalid = 0;
    this.#matches = this.#patterns.map(() => 0);
    this.#cursor = {};
    this.#channel = undefined;
    return chunk;
  }
}
