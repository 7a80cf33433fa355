/**
 * How fast a source gets lines into the log, and what memory it holds doing so. Spool: the file
 * source tailing a file of realistic log lines (web access and syslog, from the long-run test's
 * generator) through its runner into SQLite, each chunk and its cursor one critical append.
 * Ceiling: the same file read with a bare `createReadStream`, split on newlines, and the same
 * chunks (500 lines, the default batching) appended with the store's batched append in batches of
 * 16 chunks, on a fresh store of the same kind. Memory: the peak RSS growth while tailing a large
 * file (`BENCH_SOURCE_MB`, default 1,024) beside the ceiling's on the same file.
 */

import { once } from "node:events";
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import {
  createFileSource,
  DEFAULT_BATCHING,
  type SourceDefinition,
  startSourceRunner,
} from "../../src/sources/index.js";
import type { AnyNewEvent, SpoolEvent } from "../../src/spec/index.js";
import { logLines } from "../../test/support/log-lines.js";
import type { EngineSection } from "../report.js";
import { median } from "../stats.js";

const CONTINUITY = "bench";
const LINES = Number(process.env.BENCH_SOURCE_LINES ?? 200_000);
const BIG_MB = Number(process.env.BENCH_SOURCE_MB ?? 1_024);
const BATCH_CHUNKS = 16;

const definition: SourceDefinition = {
  id: "log",
  kind: "file",
  target: "app.log",
  // The last, partial chunk waits at most this long for more lines: short, so that the end of
  // the file does not count a second of waiting as ingest time.
  batching: { ...DEFAULT_BATCHING, maxWaitMs: 5 },
  include: [],
  exclude: [],
  mode: "cursor",
  patterns: { error: "ERROR|FATAL| 5\\d\\d " },
  options: {},
};

/** Writes `lines` generated log lines to `path`; resolves with its size in bytes. */
async function writeLog(path: string, lines: number): Promise<number> {
  const out = createWriteStream(path);
  let buffered = "";
  for (const line of logLines({ seed: 7, count: lines, burstAt: lines / 2, burstLength: 2_000 })) {
    buffered += `${line.text}\n`;
    if (buffered.length > 1 << 20) {
      if (!out.write(buffered)) await once(out, "drain");
      buffered = "";
    }
  }
  out.end(buffered);
  await once(out, "finish");
  return statSync(path).size;
}

/** Grows `path` to at least `bytes` by appending copies of its first `seed` bytes' lines. */
async function growTo(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path, { flags: "a" });
  let size = statSync(path).size;
  const block = await readHead(path, 8 << 20);
  while (size < bytes) {
    if (!out.write(block)) await once(out, "drain");
    size += block.length;
  }
  out.end();
  await once(out, "finish");
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let got = 0;
  for await (const part of createReadStream(path, { end: bytes - 1 })) {
    parts.push(part as Buffer);
    got += (part as Buffer).length;
  }
  const head = Buffer.concat(parts, got);
  return head.subarray(0, head.lastIndexOf(0x0a) + 1);
}

/** Tracks the peak RSS above a starting point, sampled as work proceeds. */
class RssPeak {
  readonly #start = process.memoryUsage.rss();
  #peak = 0;
  sample(): void {
    this.#peak = Math.max(this.#peak, process.memoryUsage.rss() - this.#start);
  }
  get mib(): number {
    return this.#peak / 2 ** 20;
  }
}

/** Spool: the file source and its runner, until every line of the file is logged. */
async function spoolIngest(store: EventStore, path: string, size: number, rss: RssPeak) {
  const start = performance.now();
  let lines = 0;
  let bytes = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const runner = startSourceRunner({
    store,
    continuity: CONTINUITY,
    source: createFileSource(definition, { path }),
    position: { chunks: 0, cursor: undefined },
    appended: (event: SpoolEvent) => {
      if (event.type !== "source.chunk") return;
      const data = event.data as { line_count: number; bytes: number };
      lines += data.line_count;
      bytes += data.bytes;
      if ((event.data as { n: number }).n % 64 === 0) rss.sample();
      if (bytes >= size) done();
    },
  });
  await finished;
  const ms = performance.now() - start;
  await runner.stop();
  return { lines, ms };
}

/**
 * The file source alone tailing `path` to its end into a sink that only counts (no store: a
 * store's own memory, e.g. SQLite's memory-mapped reads of a growing database, is the store's).
 */
async function sourceTail(path: string, size: number, rss: RssPeak): Promise<void> {
  const controller = new AbortController();
  let bytes = 0;
  let chunks = 0;
  await createFileSource(definition, { path }).run({
    cursor: undefined,
    signal: controller.signal,
    emit: async (emission) => {
      if (emission.type !== "chunk") return;
      bytes += emission.bytes;
      chunks += 1;
      if (chunks % 64 === 0) rss.sample();
      if (bytes >= size) controller.abort();
    },
  });
}

/** The same file read by createReadStream and split on newlines into the same counting sink. */
async function rawTail(path: string, rss: RssPeak): Promise<void> {
  let rest = "";
  let lines = 0;
  for await (const part of createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 16 })) {
    const pieces = (rest + (part as string)).split("\n");
    rest = pieces.pop() ?? "";
    lines += pieces.length;
    if (lines % 32_000 < pieces.length) rss.sample();
  }
}

/** The ceiling: createReadStream, a bare newline split, and batched appends of the same chunks. */
async function ceilingIngest(store: EventStore, path: string, rss: RssPeak) {
  const start = performance.now();
  let rest = "";
  let lines: string[] = [];
  let offset = 0;
  let n = 0;
  let total = 0;
  let pending: AnyNewEvent[] = [];
  const chunk = () => {
    n += 1;
    total += lines.length;
    pending.push({
      continuity: CONTINUITY,
      stream: { kind: "source", id: "raw" },
      type: "source.chunk",
      data: { source_id: "raw", n, lines, line_count: lines.length, bytes: 0, cursor: { offset } },
    } as AnyNewEvent);
    lines = [];
  };
  for await (const part of createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 16 })) {
    const text = rest + (part as string);
    const pieces = text.split("\n");
    rest = pieces.pop() ?? "";
    for (const piece of pieces) {
      lines.push(piece);
      offset += piece.length + 1;
      if (lines.length === DEFAULT_BATCHING.maxLines) chunk();
    }
    if (pending.length >= BATCH_CHUNKS) {
      await store.appendBatch(pending);
      pending = [];
      rss.sample();
    }
  }
  if (lines.length > 0) chunk();
  if (pending.length > 0) await store.appendBatch(pending);
  return { lines: total, ms: performance.now() - start };
}

async function freshStore(dir: string, name: string): Promise<EventStore> {
  return openEventStore({ db: join(dir, name), env: {} });
}

/**
 * Lines per second into the log (target ≥ 50% of the ceiling) and the peak RSS growth tailing a
 * large file (flat: the same order as the ceiling's, far below the file's size).
 */
export async function measureSourceIngest(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-sources-"));
  try {
    const path = join(dir, "app.log");
    const size = await writeLog(path, LINES);
    progress(`sources: ${LINES.toLocaleString("en-US")} lines, ${(size / 2 ** 20).toFixed(1)} MiB`);
    const spool: number[] = [];
    const ceiling: number[] = [];
    for (let run = 0; run < runs; run++) {
      for (const [name, into] of [
        ["spool", spool],
        ["ceiling", ceiling],
      ] as const) {
        const store = await freshStore(dir, `${name}-${run}`);
        try {
          const rss = new RssPeak();
          const { lines, ms } =
            name === "spool"
              ? await spoolIngest(store, path, size, rss)
              : await ceilingIngest(store, path, rss);
          into.push((lines * 1000) / ms);
        } finally {
          await store.close();
        }
      }
      progress(`sources: ingest run ${run + 1}/${runs}`);
    }
    const big = join(dir, "big.log");
    await writeLog(big, 100_000);
    await growTo(big, BIG_MB * 2 ** 20);
    const bigSize = statSync(big).size;
    progress(`sources: tailing ${(bigSize / 2 ** 20).toFixed(0)} MiB`);
    const spoolRss = new RssPeak();
    await sourceTail(big, bigSize, spoolRss);
    const rawRss = new RssPeak();
    await rawTail(big, rawRss);
    const memory = { spool: spoolRss, ceiling: rawRss };
    return {
      title: "Sources: ingest into the log",
      baseline: "raw read + split + batched append",
      rows: [
        {
          measure: `file source → log, ${LINES.toLocaleString("en-US")} log lines`,
          unit: "lines/s",
          spool: median(spool),
          ceiling: median(ceiling),
          target: { minRatio: 0.5 },
        },
        {
          measure: `peak RSS growth, file source tailing ${(bigSize / 2 ** 30).toFixed(1)} GiB`,
          unit: "MiB",
          spool: memory.spool.mib,
          ceiling: memory.ceiling.mib,
          target: { maxValue: 256 },
        },
      ],
      notes: [
        "Spool: the file source through its runner; each 500-line chunk one critical event with its cursor (chunks read together commit together).",
        `Ceiling: createReadStream + split("\\n") + appendBatch of the same 500-line chunks, ${BATCH_CHUNKS} per batch, on a fresh SQLite store.`,
        `Memory: one run of the file source alone (a counting sink, no store) beside createReadStream + split into the same sink; the file is ${(bigSize / 2 ** 20).toFixed(0)} MiB (BENCH_SOURCE_MB), so a flat RSS is far below it. With a SQLite store the process's RSS also grows with the database through SQLite's memory-mapped reads (file-backed pages), for the raw ceiling as much as for Spool.`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
