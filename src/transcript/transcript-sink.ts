import { type FileHandle, mkdir, open, truncate } from "node:fs/promises";
import { dirname } from "node:path";
import type { EventStore } from "../log/index.js";
import { SpoolError } from "../spec/index.js";
import type { StreamSink } from "./sink.js";
import { restoreTranscriptFile } from "./transcript-file.js";
import { createTranscriptProjection, type TranscriptProjection } from "./transcript-projection.js";

/** Options of `createTranscriptSink`. */
export interface TranscriptSinkOptions {
  store: EventStore;
  continuity: string;
  thread: string;
  /** The `transcript.jsonl` to write; its directories are created. */
  path: string;
  /**
   * Follow the log after this seq, taking the file to hold the thread's lines up to it (lines past
   * it are cut; a missing file is fine: pass the head when a thread starts in a long continuity,
   * so the sink does not read the continuity's history). `0` starts the file over. Default: go
   * on from what the file holds (rewriting its last event, which may be a torn write), from the
   * beginning of the log when there is no file.
   */
  fromSeq?: number;
  /** The sink's name in reports (default `transcript`). */
  name?: string;
  /** Past event boundaries `digestUpTo` can answer for (default 1,024). */
  digestHistory?: number;
}

/** The live `transcript.jsonl` writer; see `createTranscriptSink`. */
export interface TranscriptSink extends StreamSink {
  readonly path: string;
  /**
   * Resolves once the file holds every line of the thread with seq ≤ `seq` (a committed seq of
   * any continuity). Rejects with the sink's failure if it has failed.
   */
  caughtUp(seq: number): Promise<void>;
  /**
   * sha256 (hex) of the file's lines with seq ≤ `seq` — the `transcript_sha256` of a checkpoint
   * at `seq`. Call after `caughtUp(seq)`; throws `transcript.not-caught-up` before it. `undefined`
   * when `seq` is older than the boundaries kept, or the sink has failed.
   */
  digestUpTo(seq: number): string | undefined;
  /** Waits for everything up to the store's head at this moment, then stops following. */
  close(): Promise<void>;
}

/**
 * Writes a thread's `transcript.jsonl` by following the LOG, not the parts: it subscribes to the
 * continuity from `fromSeq`, folds every event through the transcript projection and appends the
 * lines of the thread's events to the file as they are committed (token deltas show up at the
 * store's droppable flush). The file therefore equals `rebuildTranscript` byte for byte, live.
 *
 * It is a `StreamSink` so it can ride in a step's fan-out: `write` ignores parts (it throws the
 * sink's failure, if any, so the fan-out reports it). A file that cannot be created or written,
 * or a store that fails, fails the sink (`caughtUp` and `close` reject); it never throws out of
 * the stream.
 */
export function createTranscriptSink(options: TranscriptSinkOptions): TranscriptSink {
  return new LiveTranscript(options);
}

class LiveTranscript implements TranscriptSink {
  readonly name: string;
  readonly path: string;
  readonly #options: TranscriptSinkOptions;
  readonly #abort = new AbortController();
  readonly #ready: Promise<void>;
  #markReady!: () => void;
  #projection: TranscriptProjection | undefined;
  #handle: FileHandle | undefined;
  /** Text rendered and not yet written, and the projection position it brings the file to. */
  #chunks: string[] = [];
  #chunkChars = 0;
  #writing: Promise<void> | undefined;
  /** The file holds every line with seq ≤ this. */
  #written = -1;
  #waiters: { seq: number; resolve: () => void; reject: (error: unknown) => void }[] = [];
  #failed = false;
  #failure: unknown;
  readonly #loop: Promise<void>;
  #closing: Promise<void> | undefined;

  constructor(options: TranscriptSinkOptions) {
    this.name = options.name ?? "transcript";
    this.path = options.path;
    this.#options = options;
    this.#ready = new Promise((resolve) => {
      this.#markReady = resolve;
    });
    this.#loop = this.#run();
  }

  write(): void {
    if (this.#failed) throw this.#failure;
  }

  async caughtUp(seq: number): Promise<void> {
    await this.#ready;
    if (this.#failed) throw this.#failure;
    if (this.#written >= seq) return;
    const { store, continuity } = this.#options;
    const head = await store.head();
    if (seq > head) return this.#waitWritten(seq);
    // Events of other continuities never reach this subscription: find the last of ours ≤ seq.
    let last = this.#projection!.position;
    for await (const event of store.read({ continuity, after: last, until: seq })) last = event.seq;
    await this.#waitWritten(last);
    // Nothing of this continuity lies in (last, seq], and seq is committed: the file is complete
    // up to seq.
    this.#projection!.advance(seq);
    this.#written = Math.max(this.#written, seq);
  }

  digestUpTo(seq: number): string | undefined {
    if (this.#failed) return undefined;
    const projection = this.#projection;
    if (!projection || seq > projection.position) {
      throw new SpoolError(
        "transcript.not-caught-up",
        `the transcript of ${this.#options.thread} is not caught up to seq ${seq}`,
        { hint: "Await caughtUp(seq) before asking for its digest" },
      );
    }
    return projection.digestUpTo(seq);
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    try {
      await this.#ready;
      if (!this.#failed) {
        const { store } = this.#options;
        await store.flush();
        await this.caughtUp(await store.head());
      }
    } catch (error) {
      this.#fail(error);
    } finally {
      this.#abort.abort();
      await this.#loop;
      while (this.#writing !== undefined) await this.#writing;
      await this.#handle?.close().catch(() => undefined);
      this.#handle = undefined;
    }
    if (this.#failed) throw this.#failure;
  }

  async #run(): Promise<void> {
    const { store, continuity, thread, path, fromSeq } = this.#options;
    try {
      await mkdir(dirname(path), { recursive: true });
      const restored = await restoreTranscriptFile(path, thread, fromSeq);
      if (restored.size > restored.keepBytes) await truncate(path, restored.keepBytes);
      this.#handle = await open(path, "a");
      const projection = createTranscriptProjection(thread, {
        digestHistory: this.#options.digestHistory ?? 1024,
        resume: restored.state,
      });
      this.#projection = projection;
      this.#written = projection.position;
      this.#markReady();
      const messages = store.subscribe({
        continuity,
        after: projection.position,
        signal: this.#abort.signal,
      });
      for await (const message of messages) {
        if (message.type === "event") {
          const text = projection.push(message.event);
          if (text !== "") {
            this.#chunks.push(text);
            this.#chunkChars += text.length;
          }
        } else projection.advance(message.seq);
        this.#flush();
        // Do not run ahead of a slow disk by more than a few MiB of text.
        if (this.#chunkChars > 4 * 1024 * 1024 && this.#writing !== undefined) await this.#writing;
        if (this.#failed) break;
      }
      if (!this.#abort.signal.aborted) {
        throw new SpoolError(
          "transcript.store-closed",
          `the event store closed while the transcript of ${thread} was following it`,
          { hint: "Close the transcript sink before the store" },
        );
      }
    } catch (error) {
      this.#fail(error);
    } finally {
      this.#markReady();
    }
  }

  /** Starts writing what is pending, unless a write is in flight (it picks it up). */
  #flush(): void {
    if (this.#writing !== undefined || this.#failed) return;
    if (this.#chunks.length === 0) {
      this.#advanceWritten(this.#projection!.position);
      return;
    }
    this.#writing = this.#writeLoop().finally(() => {
      this.#writing = undefined;
    });
  }

  async #writeLoop(): Promise<void> {
    try {
      while (this.#chunks.length > 0 && !this.#failed) {
        const text = this.#chunks.length === 1 ? this.#chunks[0]! : this.#chunks.join("");
        const through = this.#projection!.position;
        this.#chunks = [];
        this.#chunkChars = 0;
        await this.#handle!.appendFile(text, "utf8");
        this.#advanceWritten(through);
      }
      if (!this.#failed) this.#advanceWritten(this.#projection!.position);
    } catch (error) {
      this.#fail(error);
    }
  }

  #advanceWritten(seq: number): void {
    if (seq > this.#written) this.#written = seq;
    if (this.#waiters.length === 0) return;
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) {
      if (waiter.seq <= this.#written) waiter.resolve();
      else this.#waiters.push(waiter);
    }
  }

  #waitWritten(seq: number): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failure);
    if (this.#written >= seq) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ seq, resolve, reject }));
  }

  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#failure = error;
    this.#abort.abort();
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) waiter.reject(error);
  }
}
