import { createHash, type Hash, type KeyObject } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { EventStore } from "../log/index.js";
import { eventSpec, SpoolError } from "../spec/index.js";
import { checkpointText, verifySignature } from "./signing.js";
import { compareWithLog } from "./transcript-compare.js";
import { readFileLines } from "./transcript-file.js";
import { parseTranscriptLine, type TranscriptLine } from "./transcript-lines.js";
import { findThreadContinuity } from "./transcript-rebuild.js";

/** What can be wrong with a transcript file. */
export type TranscriptProblemKind =
  | "parse"
  | "order"
  | "digest"
  | "signature"
  | "unknown-key"
  | "mismatch"
  | "missing"
  | "extra";

/** The first problem found: where (1-based line, byte offset) and what. */
export interface TranscriptProblem {
  kind: TranscriptProblemKind;
  line: number;
  byteOffset: number;
  message: string;
}

/** What `verifyTranscriptFile` found. */
export interface TranscriptReport {
  ok: boolean;
  /** Lines checked before the first problem (all of them when there is none). */
  lines: number;
  /** `checkpoint.signed` lines checked before the first problem. */
  checkpoints: number;
  /** The thread and continuity the file was checked as, when known. */
  thread?: string;
  continuity?: string;
  firstProblem?: TranscriptProblem;
}

/** Options of `verifyTranscriptFile`. */
export interface VerifyTranscriptOptions {
  /** Also compare the file with the log's transcript, byte for byte. */
  store?: EventStore;
  /** Default: the continuity holding the thread's `thread.started` (needs `store`). */
  continuity?: string;
  /** Default: the thread the file's lines name. */
  thread?: string;
  /** Trusted public keys by key id. Without them, signatures are not checked. */
  publicKeys?: Map<string, KeyObject>;
}

/** Past boundaries whose running hash is kept; older ones are hashed again from the file. */
const KEPT_HASHES = 4096;

/**
 * Checks a `transcript.jsonl`: every line parses and seqs never decrease; every
 * `checkpoint.signed` line's `transcript_sha256` equals the sha256 of the lines before it with
 * seq ≤ its `data.seq`, and its signature verifies with the key its `key_id` names (when
 * `publicKeys` are given; a signature needs the continuity, from `continuity` or the store). With a
 * store, the file must also equal `rebuildTranscript` byte for byte. Reports the earliest problem
 * in the file (a problem of the file itself wins a tie with a difference from the log).
 *
 * Streams the file; throws only when it cannot be read (`transcript.unreadable`) or when a store
 * is given and the file names no thread and none was passed (`transcript.unknown-thread`).
 */
export async function verifyTranscriptFile(
  path: string,
  options: VerifyTranscriptOptions = {},
): Promise<TranscriptReport> {
  await readable(path);
  const thread = options.thread ?? (await threadOf(path));
  let continuity = options.continuity;
  if (options.store && thread === undefined) {
    throw new SpoolError("transcript.unknown-thread", `no line of ${path} names its thread`, {
      hint: "Pass the thread id",
    });
  }
  if (options.store && continuity === undefined && thread !== undefined) {
    continuity = await findThreadContinuity(options.store, thread);
    if (continuity === undefined) {
      return {
        ok: false,
        lines: 0,
        checkpoints: 0,
        thread,
        firstProblem: {
          kind: "extra",
          line: 1,
          byteOffset: 0,
          message: `the log in ${options.store.location} has no thread ${JSON.stringify(thread)}`,
        },
      };
    }
  }
  const scan = await scanFile(path, continuity, options.publicKeys);
  let problem = scan.problem;
  if (options.store && continuity !== undefined && thread !== undefined) {
    const stopAt = problem ? problem.byteOffset + 1 : Number.POSITIVE_INFINITY;
    const difference = await compareWithLog(path, options.store, continuity, thread, stopAt);
    if (difference && (!problem || difference.line < problem.line)) problem = difference;
  }
  const before = (line: number) => line < (problem?.line ?? Number.POSITIVE_INFINITY);
  return {
    ok: problem === undefined,
    lines: problem ? problem.line - 1 : scan.lines,
    checkpoints: scan.checkpointLines.filter(before).length,
    ...(thread !== undefined ? { thread } : {}),
    ...(continuity !== undefined ? { continuity } : {}),
    ...(problem ? { firstProblem: problem } : {}),
  };
}

interface Scan {
  lines: number;
  checkpointLines: number[];
  problem?: TranscriptProblem;
}

/** The checks of the file on its own: parse, order, digests, signatures. */
async function scanFile(
  path: string,
  continuity: string | undefined,
  publicKeys: Map<string, KeyObject> | undefined,
): Promise<Scan> {
  const scan: Scan = { lines: 0, checkpointLines: [] };
  const hash = createHash("sha256");
  const boundaries = new Boundaries(path);
  let previousSeq = 0;
  for await (const { raw, offset, number, complete } of readFileLines(path)) {
    const at = { line: number, byteOffset: offset };
    if (!complete) {
      scan.problem = {
        kind: "parse",
        ...at,
        message: "the last line has no newline (a cut write)",
      };
      break;
    }
    const parsed = parseTranscriptLine(raw.toString("utf8", 0, raw.length - 1));
    if (!parsed.ok) {
      scan.problem = { kind: "parse", ...at, message: parsed.message };
      break;
    }
    const seq = parsed.line.seq;
    if (seq < previousSeq) {
      scan.problem = {
        kind: "order",
        ...at,
        message: `seq ${seq} comes after seq ${previousSeq}; lines must be in seq order`,
      };
      break;
    }
    if (seq > previousSeq && scan.lines > 0) boundaries.add(previousSeq, offset, hash);
    if (parsed.line.type === "checkpoint.signed") {
      const digestAt = (upTo: number) =>
        upTo >= previousSeq ? Promise.resolve(hash.copy().digest("hex")) : boundaries.digest(upTo);
      const problem = await checkCheckpoint(parsed.line, digestAt, continuity, publicKeys);
      if (problem) {
        scan.problem = { ...problem, ...at };
        break;
      }
      scan.checkpointLines.push(number);
    }
    hash.update(raw);
    previousSeq = seq;
    scan.lines += 1;
  }
  return scan;
}

async function checkCheckpoint(
  line: TranscriptLine,
  digestAt: (seq: number) => Promise<string>,
  continuity: string | undefined,
  publicKeys: Map<string, KeyObject> | undefined,
): Promise<Pick<TranscriptProblem, "kind" | "message"> | undefined> {
  const parsed = eventSpec("checkpoint.signed")!.schema.safeParse("data" in line ? line.data : {});
  if (!parsed.success) {
    return { kind: "parse", message: `checkpoint.signed data: ${parsed.error.issues[0]?.message}` };
  }
  const data = parsed.data as {
    reason: string;
    seq: number;
    head_hash: string;
    key_id: string;
    thread?: string;
    transcript_sha256?: string;
    signature: string;
  };
  if (data.transcript_sha256 !== undefined) {
    const digest = await digestAt(data.seq);
    if (digest !== data.transcript_sha256) {
      return {
        kind: "digest",
        message: `the lines up to seq ${data.seq} hash to ${digest}, the checkpoint says ${data.transcript_sha256}`,
      };
    }
  }
  if (!publicKeys) return undefined;
  const key = publicKeys.get(data.key_id);
  if (!key) return { kind: "unknown-key", message: `unknown key id ${data.key_id}` };
  if (continuity === undefined) {
    return {
      kind: "signature",
      message: "cannot check the signature: the continuity is unknown (pass it, or a store)",
    };
  }
  const text = checkpointText({ continuity, ...data });
  if (!verifySignature(key, text, data.signature)) {
    return {
      kind: "signature",
      message: `the signature does not verify with key ${data.key_id} for continuity ${continuity}`,
    };
  }
  return undefined;
}

/**
 * The ends of the file's seq groups, with the running hash at each (the newest `KEPT_HASHES` of
 * them; older digests are computed again from the file's bytes).
 */
class Boundaries {
  readonly #path: string;
  readonly #seqs: number[] = [];
  readonly #ends: number[] = [];
  readonly #hashes: (Hash | undefined)[] = [];

  constructor(path: string) {
    this.#path = path;
  }

  /** Lines with seq ≤ `seq` end at byte `end`, where the running hash is `hash`. */
  add(seq: number, end: number, hash: Hash): void {
    this.#seqs.push(seq);
    this.#ends.push(end);
    this.#hashes.push(hash.copy());
    const old = this.#hashes.length - 1 - KEPT_HASHES;
    if (old >= 0) this.#hashes[old] = undefined;
  }

  /** sha256 of the lines with seq ≤ `seq`, for a `seq` below the newest boundary's. */
  async digest(seq: number): Promise<string> {
    let low = 0;
    let high = this.#seqs.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (this.#seqs[middle]! <= seq) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    if (found < 0) return createHash("sha256").digest("hex");
    const kept = this.#hashes[found];
    if (kept) return kept.copy().digest("hex");
    return hashPrefix(this.#path, this.#ends[found]!);
  }
}

async function hashPrefix(path: string, bytes: number): Promise<string> {
  const hash = createHash("sha256");
  if (bytes > 0) {
    for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) {
      hash.update(chunk as Buffer);
    }
  }
  return hash.digest("hex");
}

/** The thread the file's lines name: a thread stream's id, else a model step's `data.thread`. */
async function threadOf(path: string): Promise<string | undefined> {
  for await (const { raw, complete } of readFileLines(path)) {
    if (!complete) return undefined;
    const parsed = parseTranscriptLine(raw.toString("utf8", 0, raw.length - 1));
    if (!parsed.ok || !("stream" in parsed.line)) continue;
    if (parsed.line.stream.kind === "thread") return parsed.line.stream.id;
    const data = parsed.line.data as { kind?: unknown; thread?: unknown } | null;
    if (parsed.line.type === "step.started" && data?.kind === "model") {
      if (typeof data.thread === "string") return data.thread;
    }
  }
  return undefined;
}

async function readable(path: string): Promise<void> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error("not a regular file");
  } catch (error) {
    throw new SpoolError("transcript.unreadable", `cannot read the transcript file ${path}`, {
      hint: "Check the path",
      cause: error,
    });
  }
}
