import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { type PreparedEvent, StoreError } from "../../spec/index.js";
import { rowValues, type WrittenRows } from "./sqlite-chain-writer.js";
import { sqliteError } from "./sqlite-errors.js";

/** What the writer thread needs to open its connection. */
export interface WriterSetup {
  file: string;
  durability: "strict" | "fast";
  busyTimeoutMs: number;
}

/** One chunk of a batch; `begin` on the first, `end` on the last (one chunk may be both). */
export type WriterRequest =
  | { op: "rows"; id: number; rows: unknown[]; begin: boolean; end: boolean }
  | { op: "close" };

/** The writer thread's answer to a batch: what it assigned, or why it wrote nothing. */
export type WriterReply =
  | ({ id: number } & WrittenRows)
  | { id: number; error: { message: string; code: string | undefined } };

/** Events per chunk: the store's thread builds chunk n + 1 while the writer inserts chunk n. */
const CHUNK = 250;

interface Waiting {
  resolve: (rows: WrittenRows) => void;
  reject: (error: unknown) => void;
}

/**
 * A second connection on a worker thread that writes large batches, so that on a machine with
 * two cores the canonical forms of a batch are built on the store's thread while the chain
 * hashes and inserts run on the writer's. Started on the first large batch.
 *
 * Contract: batches are written in the order `write` is called, each in one transaction; a
 * promise resolves only after `COMMIT` returned on the writer's connection (as durable as the
 * store's `durability`), and rejects with a `StoreError` when nothing of the batch was written.
 * The thread never keeps the process alive while idle.
 */
export class SqliteWriterThread {
  readonly #setup: WriterSetup;
  readonly #waiting = new Map<number, Waiting>();
  #worker: Worker | undefined;
  #next = 1;

  constructor(setup: WriterSetup) {
    this.#setup = setup;
  }

  /** Writes `events` in one transaction on the writer thread. */
  write(events: readonly PreparedEvent[]): Promise<WrittenRows> {
    const worker = this.#ensureWorker();
    const id = this.#next++;
    const done = new Promise<WrittenRows>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    if (this.#waiting.size === 1) worker.ref();
    for (let start = 0; start < events.length; start += CHUNK) {
      const end = Math.min(events.length, start + CHUNK);
      const rows = rowValues(events.slice(start, end));
      worker.postMessage({ op: "rows", id, rows, begin: start === 0, end: end === events.length });
    }
    return done;
  }

  /** Stops the thread after the writes already sent; waits for it to exit. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    worker.postMessage({ op: "close" } satisfies WriterRequest);
    worker.ref();
    await exited;
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = startWorker(this.#setup);
    worker.unref();
    worker.on("message", (reply: WriterReply) => this.#settle(reply));
    worker.on("error", (error) => this.#stopped(worker, error));
    worker.on("exit", (code) => this.#stopped(worker, new Error(`exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #settle(reply: WriterReply): void {
    const waiting = this.#waiting.get(reply.id);
    if (!waiting) return;
    this.#waiting.delete(reply.id);
    if (this.#waiting.size === 0) this.#worker?.unref();
    if ("error" in reply) {
      const error = Object.assign(new Error(reply.error.message), { code: reply.error.code });
      waiting.reject(sqliteError(error, this.#setup.file));
    } else {
      waiting.resolve({ first: reply.first, hashes: reply.hashes });
    }
  }

  /** The thread died: nothing in flight was acknowledged; the next write starts a new thread. */
  #stopped(worker: Worker, cause: unknown): void {
    if (this.#worker === worker) this.#worker = undefined;
    if (this.#waiting.size === 0) return;
    const error = new StoreError("store.io", `the SQLite writer thread stopped: ${String(cause)}`, {
      cause,
      retryable: true,
      hint: "Retry the append; events that were not acknowledged were not written",
    });
    for (const { reject } of this.#waiting.values()) reject(error);
    this.#waiting.clear();
  }
}

/**
 * Starts the writer thread: the compiled `.js` entry when running from `dist/`, or the `.ts`
 * source through tsx's loader when running from source (tests, `tsx`).
 */
function startWorker(setup: WriterSetup): Worker {
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./sqlite-writer-worker.js", import.meta.url), { workerData: setup });
  }
  const entry = new URL("./sqlite-writer-worker.ts", import.meta.url).href;
  // tsx's ESM entry (its hooks must be registered from ESM); `require.resolve` finds the CJS twin.
  const cjs = createRequire(import.meta.url).resolve("tsx/esm/api");
  const tsx = pathToFileURL(cjs.replace(/\.cjs$/, ".mjs")).href;
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData: setup });
}
