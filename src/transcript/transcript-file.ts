import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { SpoolError } from "../spec/index.js";
import { parseTranscriptLine } from "./transcript-lines.js";
import type { TranscriptResumeState } from "./transcript-projection.js";

/** One line of a file as read: its bytes and where it starts. */
export interface FileLine {
  /** The line's bytes, with its `\n` when it has one. */
  raw: Buffer;
  /** Byte offset of its first byte. */
  offset: number;
  /** 1-based. */
  number: number;
  /** False only for a last line without `\n`. */
  complete: boolean;
}

/** The lines of the file at `path` (bytes, offsets, numbers), streamed in 64 KiB reads. */
export async function* readFileLines(path: string): AsyncIterable<FileLine> {
  let parts: Buffer[] = [];
  let offset = 0;
  let number = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    const buffer = chunk as Buffer;
    let start = 0;
    for (let end = buffer.indexOf(10); end >= 0; end = buffer.indexOf(10, start)) {
      const piece = buffer.subarray(start, end + 1);
      const raw = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
      parts = [];
      number += 1;
      yield { raw, offset, number, complete: true };
      offset += raw.length;
      start = end + 1;
    }
    if (start < buffer.length) parts.push(buffer.subarray(start));
  }
  if (parts.length > 0) {
    yield { raw: Buffer.concat(parts), offset, number: number + 1, complete: false };
  }
}

/** What `restoreTranscriptFile` found: where to cut the file and the state to go on from. */
export interface RestoredTranscript {
  state: TranscriptResumeState;
  /** Keep the file's first `keepBytes` bytes; cut the rest. */
  keepBytes: number;
  /** The file's current size. */
  size: number;
}

const SEQ_PREFIX = /^\{"seq":(\d+),/;
const STEP_STARTED = '"type":"step.started","stream":{"kind":"step"';

/**
 * Reads an existing transcript file to go on writing it: the step streams its `step.started` lines
 * name, the sha256 of the bytes kept, and where to cut.
 * - `fromSeq` given: keeps the complete lines with seq ≤ `fromSeq` and goes on after `fromSeq`.
 * - otherwise: keeps every complete line except those of the last seq in the file (they may be a
 *   torn write) and goes on after the seq before it; a missing or empty file starts from 0.
 * Throws `SpoolError` `transcript.damaged` for a line that does not start as a transcript line or
 * a seq that goes down: such a file needs rebuilding (`spool transcript`).
 */
export async function restoreTranscriptFile(
  path: string,
  thread: string,
  fromSeq?: number,
): Promise<RestoredTranscript> {
  const size = await fileSize(path);
  const steps = new Set<string>();
  let groupSteps: string[] = [];
  let groupSeq = 0;
  let groupStart = 0;
  let keptSeq = 0;
  let keepBytes = 0;
  if (size > 0 && fromSeq !== 0) {
    for await (const line of readFileLines(path)) {
      if (!line.complete) break;
      const text = line.raw.toString("utf8", 0, line.raw.length - 1);
      const seq = Number(SEQ_PREFIX.exec(text)?.[1] ?? Number.NaN);
      if (!Number.isSafeInteger(seq) || seq < groupSeq) throw damaged(path, line.number);
      if (fromSeq !== undefined && seq > fromSeq) break;
      if (seq !== groupSeq) {
        for (const step of groupSteps) steps.add(step);
        groupSteps = [];
        keptSeq = groupSeq;
        groupSeq = seq;
        groupStart = line.offset;
      }
      if (text.includes(STEP_STARTED)) {
        const parsed = parseTranscriptLine(text);
        if (!parsed.ok) throw damaged(path, line.number);
        const data = "data" in parsed.line ? (parsed.line.data as Record<string, unknown>) : {};
        if (data.kind === "model" && data.thread === thread && "stream" in parsed.line)
          groupSteps.push(parsed.line.stream.id);
      }
      keepBytes = line.offset + line.raw.length;
    }
    if (fromSeq === undefined) keepBytes = groupStart;
    else for (const step of groupSteps) steps.add(step);
  }
  const position = fromSeq ?? keptSeq;
  return {
    state: { steps, hash: await hashPrefix(path, keepBytes), bytes: keepBytes, position },
    keepBytes,
    size,
  };
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
}

async function hashPrefix(path: string, bytes: number) {
  const hash = createHash("sha256");
  if (bytes === 0) return hash;
  for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) {
    hash.update(chunk as Buffer);
  }
  return hash;
}

function damaged(path: string, line: number): SpoolError {
  return new SpoolError(
    "transcript.damaged",
    `the transcript file ${path} is damaged at line ${line}`,
    {
      hint: "Move it away and write it again from the log with `spool transcript <thread> --out <file>`",
      details: { path, line },
    },
  );
}
