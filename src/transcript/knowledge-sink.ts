import { appendFile, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { EventStore } from "../log/index.js";
import type { StreamPart } from "../providers/index.js";
import type { SpoolEvent } from "../spec/index.js";
import { KnowledgeFold } from "./knowledge-render.js";
import type { StreamSink } from "./sink.js";

/** Where a knowledge checkpoint reads the thread's events from. */
export type KnowledgeSource =
  | Iterable<SpoolEvent>
  | AsyncIterable<SpoolEvent>
  | {
      store: EventStore;
      continuity: string;
      /** Events after this seq only (the thread's start); default the continuity's first. */
      after?: number;
    };

/** Options of `createKnowledgeSink`. */
export interface KnowledgeSinkOptions {
  /** The `knowledge.md` to write; its directories are created. */
  path: string;
  /** The thread whose events a checkpoint renders. */
  thread: string;
  /** The sink's name in reports (default `knowledge`). */
  name?: string;
}

/** The knowledge markdown writer; see `createKnowledgeSink`. */
export interface KnowledgeSink extends StreamSink {
  readonly path: string;
  /** Queues a text delta's append and returns at once; throws the sink's failure, if any. */
  write(part: StreamPart): void;
  /**
   * Re-renders the whole file from the log (`renderKnowledge` of the thread's events), atomically
   * (a temporary file renamed over it), followed by the text of a message still streaming. Appends
   * queued before the call are folded into it. Rejects if the file cannot be written. A store
   * source is folded incrementally: each checkpoint reads only what the store has gained since
   * the sink's last one, so a long thread costs each step its new events, not its whole log.
   */
  checkpoint(source: KnowledgeSource): Promise<void>;
  /** Resolves once every file write queued so far is done (whether or not it succeeded). */
  flushed(): Promise<void>;
  /** Waits for every queued write; rejects with the sink's failure, if any. */
  close(): Promise<void>;
}

/**
 * The knowledge sink: a `StreamSink` that appends the model's text deltas to `knowledge.md` as
 * they come (raw text; a message's first delta is preceded by a blank line), so the file grows
 * live between checkpoints; `checkpoint` then regenerates the file from the log. File writes run
 * one at a time, in order; `write` never waits for them. A failed write fails the sink: the next
 * `write` and `close` throw it.
 */
export function createKnowledgeSink(options: KnowledgeSinkOptions): KnowledgeSink {
  return new Knowledge(options);
}

class Knowledge implements KnowledgeSink {
  readonly name: string;
  readonly path: string;
  readonly #thread: string;
  /** Text of the message streaming now, and whether it has ended. */
  #live = "";
  #streaming = false;
  /** The fold of a store source so far, and the last seq it took. */
  #kept: { continuity: string; fold: KnowledgeFold; seq: number } | undefined;
  #startOfMessage = true;
  /** Text appended but not yet written. */
  #pending = "";
  /** The chain of file operations, one at a time. */
  #tail: Promise<void> = Promise.resolve();
  #appendQueued = false;
  #failed = false;
  #failure: unknown;
  #madeDir = false;

  constructor(options: KnowledgeSinkOptions) {
    this.name = options.name ?? "knowledge";
    this.path = options.path;
    this.#thread = options.thread;
  }

  write(part: StreamPart): void {
    if (this.#failed) throw this.#failure;
    switch (part.type) {
      case "start":
        this.#live = "";
        this.#streaming = true;
        this.#startOfMessage = true;
        return;
      case "text": {
        if (part.text === "") return;
        const text = this.#startOfMessage ? `\n\n${part.text}` : part.text;
        this.#startOfMessage = false;
        this.#live += part.text;
        this.#pending += text;
        if (!this.#appendQueued) {
          this.#appendQueued = true;
          void this.#enqueue(() => this.#appendPending());
        }
        return;
      }
      case "stop":
      case "error":
        this.#streaming = false;
        return;
      default:
        return;
    }
  }

  async checkpoint(source: KnowledgeSource): Promise<void> {
    let fold: KnowledgeFold;
    if ("store" in source) {
      const kept = this.#kept?.continuity === source.continuity ? this.#kept : undefined;
      fold = kept?.fold ?? new KnowledgeFold(this.#thread);
      let after = Math.max(source.after ?? 0, kept?.seq ?? 0);
      for await (const event of source.store.read({ continuity: source.continuity, after })) {
        fold.push(event);
        after = event.seq;
      }
      this.#kept = { continuity: source.continuity, fold, seq: after };
    } else if (Symbol.asyncIterator in source) {
      fold = new KnowledgeFold(this.#thread);
      for await (const event of source) fold.push(event);
    } else {
      fold = new KnowledgeFold(this.#thread);
      for (const event of source) fold.push(event);
    }
    const rendered = fold.render();
    await this.#enqueue(async () => {
      // What was pending is part of the live text, which follows the render while it streams.
      this.#pending = "";
      const text = this.#streaming && this.#live !== "" ? `${rendered}\n${this.#live}` : rendered;
      await this.#replace(text);
    });
    if (this.#failed) throw this.#failure;
  }

  flushed(): Promise<void> {
    return this.#tail;
  }

  async close(): Promise<void> {
    await this.#tail;
    if (this.#failed) throw this.#failure;
  }

  #enqueue(operation: () => Promise<void>): Promise<void> {
    this.#tail = this.#tail.then(async () => {
      if (this.#failed) return;
      try {
        if (!this.#madeDir) {
          await mkdir(dirname(this.path), { recursive: true });
          this.#madeDir = true;
        }
        await operation();
      } catch (error) {
        this.#failed = true;
        this.#failure = error;
      }
    });
    return this.#tail;
  }

  async #appendPending(): Promise<void> {
    this.#appendQueued = false;
    const text = this.#pending;
    this.#pending = "";
    if (text !== "") await appendFile(this.path, text, "utf8");
  }

  async #replace(text: string): Promise<void> {
    const temporary = join(dirname(this.path), `.${basename(this.path)}.${process.pid}.tmp`);
    try {
      await writeFile(temporary, text, "utf8");
      await rename(temporary, this.path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
}
