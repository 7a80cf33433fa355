import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import {
  canonicalEvent,
  chainHash,
  type PreparedEvent,
  type SpoolEvent,
  storedEvent,
} from "../../spec/index.js";
import type { LeaseFence } from "../lease.js";
import type { WriteOptions } from "../log-backend.js";
import { canonicalData, rememberStoredData } from "../stored-data.js";
import { BatchWriter, FIELDS, SEPARATOR, type WriteResult } from "./sqlite-write.js";

/**
 * Events in the first chunk a batch is sent to the writer thread in; each next chunk is twice as
 * large, up to `LARGEST_CHUNK`. The first is small so the thread starts early; later ones larger,
 * for fewer messages.
 */
const FIRST_CHUNK = 100;
const LARGEST_CHUNK = 800;
/**
 * The writer thread's script, beside this module in `src/` and in `dist/`. A bundler that inlines
 * this module without emitting that file leaves the store writing on its own thread only.
 */
const THREAD_SCRIPT = new URL("./sqlite-writer-thread.js", import.meta.url);
let threadScriptFound: boolean | undefined;

/** Continuity heads remembered between writes before the memory is cleared. */
const MAX_HEADS = 10_000;

/** How the SQLite store writes. */
export interface SqliteWriterOptions {
  /** The database file, for the writer thread's own connection. */
  file: string;
  /** `synchronous` of the writer thread's connection, as the store's. */
  synchronous: "FULL" | "NORMAL";
  busyTimeoutMs: number;
  /**
   * Writes of at least this many events go to the writer thread, started on the first one
   * (default 256). `0` sends every write there; `Infinity` never starts it.
   */
  threadMinEvents?: number;
}

/**
 * A chunk ready to store: its fields and, when linked here, its chain hashes and the heads they
 * were linked onto.
 */
interface LinkedChunk {
  fields: string[];
  hashes: string[] | null;
  /** Flat pairs: a continuity first met in the batch in this chunk, the head it was linked onto. */
  expected: string[];
}

/**
 * Writes the store's batches, in the order `write` is called.
 *
 * A write is serialising the events, linking them into their chains (hashing), and inserting and
 * committing them. Small writes, while the writer thread is idle, do all of it here at once, the
 * `BatchWriter` linking onto the heads it finds under the write lock. A large batch goes to a
 * writer thread with its own connection, a chunk at a time in one synchronous loop: it is
 * serialised and hashed here while the thread inserts the chunk before, and a later batch is
 * while an earlier one commits, so the work overlaps on two cores. (Measured on a stream of
 * appends: this thread is busy about 97% of the time and the writer about 75%; with the writer
 * hashing too, it was the one at 95%, and throughput fell.)
 *
 * Hashing here links onto the heads this writer last stored (or reads, for a continuity it has
 * not met); `BatchWriter` checks them under the write lock and relinks a continuity that another
 * connection moved meanwhile.
 */
export class SqliteWriter {
  readonly #local: BatchWriter;
  readonly #options: SqliteWriterOptions;
  readonly #threadMin: number;
  /** The newest head hash this writer linked or stored, per continuity. */
  readonly #heads = new Map<string, string>();
  #thread: WriterThread | undefined;
  #checkpointer: WriterThread | undefined;

  constructor(db: Database.Database, options: SqliteWriterOptions) {
    this.#local = new BatchWriter(db);
    this.#options = options;
    this.#threadMin = options.threadMinEvents ?? 256;
  }

  /** True while the writer thread runs: checkpoints then go there too. */
  get threaded(): boolean {
    return this.#thread?.alive === true;
  }

  /**
   * Writes `batch` in one transaction, fenced by `fences` and, with `expectFirst`, only at that
   * first seq; resolves with it as stored.
   */
  async write(
    batch: readonly PreparedEvent[],
    fences?: readonly LeaseFence[],
    options?: WriteOptions,
  ): Promise<SpoolEvent[]> {
    if (this.#heads.size > MAX_HEADS) this.#heads.clear();
    const met = new Set<string>();
    const expectFirst = options?.expectFirst;
    const thread = this.#threadFor(batch.length);
    try {
      if (!thread) {
        // Under the write lock here: the writer links onto the heads as stored.
        const { fields } = this.#link(batch, 0, batch.length, met, false);
        try {
          this.#local.begin(fences, expectFirst);
          this.#local.add(fields, null, []);
          const stored = this.#stored(batch, this.#local.commit(), []);
          for (let i = 0; i < stored.length; i++) {
            rememberStoredData(stored[i]!, fields[i * FIELDS + 9]!);
          }
          return stored;
        } catch (error) {
          this.#local.rollback();
          throw error;
        }
      }
      const hashes: string[] = [];
      const data: string[] = [];
      const answer = thread.send(batch.length, fences, expectFirst, (start, end) => {
        const linked = this.#link(batch, start, end, met, true);
        for (const hash of linked.hashes ?? []) hashes.push(hash);
        for (let i = 0; i < end - start; i++) data.push(linked.fields[i * FIELDS + 9]!);
        return linked;
      });
      const stored = this.#stored(batch, await answer, hashes);
      for (let i = 0; i < stored.length; i++) rememberStoredData(stored[i]!, data[i]!);
      return stored;
    } catch (error) {
      // The heads remembered from this batch were never stored.
      this.#heads.clear();
      throw error;
    }
  }

  /**
   * Runs a passive WAL checkpoint on a thread of its own (with its own connection), started with
   * the first: it copies pages and syncs the file beside the writer thread, not in its queue.
   */
  checkpointInThread(): void {
    if (this.#checkpointer && !this.#checkpointer.alive) this.#checkpointer = undefined;
    this.#checkpointer ??= new WriterThread(this.#options);
    this.#checkpointer.checkpoint();
  }

  /** Ends the threads once they have answered everything sent to them. */
  async close(): Promise<void> {
    await Promise.all([this.#thread?.close(), this.#checkpointer?.close()]);
    this.#thread = undefined;
    this.#checkpointer = undefined;
  }

  #threadFor(events: number): WriterThread | undefined {
    if (this.#thread && !this.#thread.alive) this.#thread = undefined;
    // While the thread has writes in flight, later ones must follow them there, to keep order.
    if (this.#thread?.busy) return this.#thread;
    if (events < this.#threadMin) return undefined;
    threadScriptFound ??= existsSync(fileURLToPath(THREAD_SCRIPT));
    if (!threadScriptFound) return undefined;
    this.#thread ??= new WriterThread(this.#options);
    return this.#thread;
  }

  /**
   * The fields of `batch[start…end)` and, when `hash`, their chain hashes. `met` holds the
   * continuities of the batch's earlier chunks: only a continuity's first event in a batch links
   * onto a head the writer must check; the rest link onto the event before them.
   */
  #link(
    batch: readonly PreparedEvent[],
    start: number,
    end: number,
    met: Set<string>,
    hash: boolean,
  ): LinkedChunk {
    const fields: string[] = new Array((end - start) * FIELDS);
    const hashes: string[] | null = hash ? new Array(end - start) : null;
    const expected: string[] = [];
    for (let i = start; i < end; i++) {
      const event = batch[i]!;
      const { continuity } = event;
      const dataJson = canonicalData(event);
      if (hashes) {
        let previous = this.#heads.get(continuity);
        if (!met.has(continuity)) {
          met.add(continuity);
          previous ??= this.#local.head(continuity);
          expected.push(continuity, previous);
        }
        const linked = chainHash(previous!, canonicalEvent(event, dataJson));
        this.#heads.set(continuity, linked);
        hashes[i - start] = linked;
      }
      const at = (i - start) * FIELDS;
      fields[at] = event.id;
      fields[at + 1] = continuity;
      fields[at + 2] = event.stream.kind;
      fields[at + 3] = event.stream.id;
      fields[at + 4] = event.type;
      fields[at + 5] = event.ts;
      fields[at + 6] = event.actor ?? "";
      fields[at + 7] = event.origin ?? "";
      fields[at + 8] = event.criticality;
      fields[at + 9] = dataJson;
    }
    return { fields, hashes, expected };
  }

  /**
   * `batch` as stored: each event with its seq and chain hash. The heads remembered for its
   * continuities become the stored ones (replies come in write order, so the last one wins).
   */
  #stored(batch: readonly PreparedEvent[], result: WriteResult, linked: string[]): SpoolEvent[] {
    const hashes = result.hashes ?? linked;
    const events: SpoolEvent[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const event = batch[i]!;
      const hash = hashes[i]!;
      events[i] = storedEvent(event, result.firstSeq + i, hash);
      if (result.hashes) this.#heads.set(event.continuity, hash);
    }
    return events;
  }
}

/** The writer thread: its own connection, fed chunks; answers each batch in order. */
class WriterThread {
  readonly #worker: Worker;
  readonly #waiting: Array<{ resolve: (result: WriteResult) => void; reject: (e: Error) => void }> =
    [];
  #stopped: Error | undefined;
  #exited: Promise<void>;

  constructor(options: SqliteWriterOptions) {
    this.#worker = new Worker(THREAD_SCRIPT, {
      workerData: {
        file: options.file,
        synchronous: options.synchronous,
        busyTimeoutMs: options.busyTimeoutMs,
      },
    });
    // An idle thread does not keep the process alive; one with writes in flight does.
    this.#worker.unref();
    this.#worker.on("message", (reply: ThreadReply) => this.#answer(reply));
    this.#worker.on("error", (error) => this.#stop(error));
    this.#exited = new Promise((resolve) => {
      this.#worker.once("exit", (code) => {
        this.#stop(new Error(`the writer thread exited with code ${code}`));
        resolve();
      });
    });
  }

  get alive(): boolean {
    return this.#stopped === undefined;
  }

  get busy(): boolean {
    return this.#waiting.length > 0;
  }

  /**
   * Sends a batch of `count` events, `link(start, end)` giving each chunk as it is sent. All
   * chunks go in this one synchronous call, so nothing else on this thread can touch the
   * database while the writer holds the batch's transaction open.
   */
  send(
    count: number,
    fences: readonly LeaseFence[] | undefined,
    expectFirst: number | undefined,
    link: (start: number, end: number) => LinkedChunk,
  ): Promise<WriteResult> {
    if (this.#stopped) throw this.#stopped;
    const answer = new Promise<WriteResult>((resolve, reject) =>
      this.#waiting.push({ resolve, reject }),
    );
    if (this.#waiting.length === 1) this.#worker.ref();
    for (let start = 0, size = FIRST_CHUNK; start < count; start += size, size *= 2) {
      size = Math.min(size, LARGEST_CHUNK);
      const end = Math.min(count, start + size);
      const chunk = link(start, end);
      this.#worker.postMessage({
        kind: "chunk",
        // One string each crosses the thread boundary: far cheaper than thousands.
        fields: chunk.fields.join(SEPARATOR),
        hashes: chunk.hashes?.join(SEPARATOR) ?? null,
        expected: chunk.expected,
        first: start === 0,
        last: end === count,
        ...(start === 0 && fences ? { fences } : {}),
        ...(start === 0 && expectFirst !== undefined ? { expectFirst } : {}),
      });
    }
    return answer;
  }

  checkpoint(): void {
    if (!this.#stopped) this.#worker.postMessage({ kind: "checkpoint" });
  }

  async close(): Promise<void> {
    if (!this.#stopped) {
      this.#worker.ref(); // the process waits for the thread to close its connection
      this.#worker.postMessage({ kind: "close" });
    }
    await this.#exited;
  }

  #answer(reply: ThreadReply): void {
    const waiter = this.#waiting.shift();
    if (this.#waiting.length === 0) this.#worker.unref();
    if (!waiter) return;
    if ("failed" in reply) {
      waiter.reject(Object.assign(new Error(reply.failed.message), { code: reply.failed.code }));
    } else {
      waiter.resolve({ firstSeq: reply.firstSeq, hashes: reply.hashes?.split(SEPARATOR) });
    }
  }

  #stop(error: Error): void {
    this.#stopped ??= error;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(error);
  }
}

type ThreadReply =
  | { firstSeq: number; hashes: string | undefined }
  | { failed: { message: string; code: unknown } };
