import type { EventStore } from "../log/index.js";
import { readFileLines } from "./transcript-file.js";
import { streamTranscript } from "./transcript-rebuild.js";

/** Where a transcript file first differs from what the log says it should hold. */
export interface TranscriptDifference {
  kind: "mismatch" | "missing" | "extra";
  /** 1-based line of the file. */
  line: number;
  /** Offset of the first differing byte. */
  byteOffset: number;
  message: string;
}

/**
 * Compares the file at `path` with the transcript the log rebuilds, line by line, both streamed,
 * and returns the first difference before byte `stopAt` (or `undefined`). A line of the log absent
 * from the file is `missing`, a line of the file absent from the log is `extra`, anything else
 * (a changed byte, two lines swapped) is a `mismatch`; the message quotes what the log says there.
 */
export async function compareWithLog(
  path: string,
  store: EventStore,
  continuity: string,
  thread: string,
  stopAt = Number.POSITIVE_INFINITY,
): Promise<TranscriptDifference | undefined> {
  const file = new Lookahead(fileLines(path));
  const log = new Lookahead(logLines(store, continuity, thread));
  let line = 1;
  let offset = 0;
  try {
    while (offset < stopAt) {
      const ours = await file.next();
      const theirs = await log.next();
      if (ours === undefined && theirs === undefined) return undefined;
      if (ours !== undefined && theirs !== undefined && ours.equals(theirs)) {
        offset += ours.length;
        line += 1;
        continue;
      }
      if (ours === undefined) {
        return {
          kind: "missing",
          line,
          byteOffset: offset,
          message: `the file ends here; the log has more, starting with ${quote(theirs!)}`,
        };
      }
      const at = offset + firstDifference(ours, theirs);
      if (theirs === undefined) {
        return {
          kind: "extra",
          line,
          byteOffset: at,
          message: `the log's transcript ends before this line: ${quote(ours)}`,
        };
      }
      const oursNext = await file.peek();
      const theirsNext = await log.peek();
      const logSkipped = theirsNext?.equals(ours) === true;
      const fileAdded = oursNext?.equals(theirs) === true;
      if (logSkipped && !fileAdded) {
        return {
          kind: "missing",
          line,
          byteOffset: at,
          message: `a line of the log is missing here: ${quote(theirs)}`,
        };
      }
      if (fileAdded && !logSkipped) {
        return {
          kind: "extra",
          line,
          byteOffset: at,
          message: `the file has a line the log does not: ${quote(ours)}`,
        };
      }
      return {
        kind: "mismatch",
        line,
        byteOffset: at,
        message: `${logSkipped ? "this line and the next are swapped; " : ""}the log says ${quote(theirs)}`,
      };
    }
    return undefined;
  } finally {
    await file.return();
    await log.return();
  }
}

async function* fileLines(path: string): AsyncGenerator<Buffer> {
  for await (const line of readFileLines(path)) yield line.raw;
}

async function* logLines(
  store: EventStore,
  continuity: string,
  thread: string,
): AsyncGenerator<Buffer> {
  for await (const chunk of streamTranscript(store, continuity, thread)) {
    let start = 0;
    for (let end = chunk.indexOf("\n"); end >= 0; end = chunk.indexOf("\n", start)) {
      yield Buffer.from(chunk.slice(start, end + 1), "utf8");
      start = end + 1;
    }
  }
}

function firstDifference(a: Buffer, b: Buffer | undefined): number {
  if (b === undefined) return 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) if (a[index] !== b[index]) return index;
  return length;
}

function quote(line: Buffer): string {
  const text = line.toString("utf8").replace(/\n$/, "");
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** An async iterator with one item of lookahead. */
class Lookahead<T> {
  readonly #source: AsyncGenerator<T>;
  #peeked: { value: T | undefined } | undefined;

  constructor(source: AsyncGenerator<T>) {
    this.#source = source;
  }

  async next(): Promise<T | undefined> {
    if (this.#peeked) {
      const { value } = this.#peeked;
      this.#peeked = undefined;
      return value;
    }
    const result = await this.#source.next();
    return result.done ? undefined : result.value;
  }

  async peek(): Promise<T | undefined> {
    this.#peeked ??= { value: await this.next() };
    return this.#peeked.value;
  }

  async return(): Promise<void> {
    await this.#source.return(undefined);
  }
}
