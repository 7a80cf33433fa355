import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type EventStore, resolveStoreLocation, sqlitePaths } from "../log/index.js";
import { createKnowledgeSink, type KnowledgeSink } from "./knowledge-sink.js";
import { createTranscriptSink, type TranscriptSink } from "./transcript-sink.js";

/** The live files of one thread, as a run passes them to `runModelStep`. */
export interface ThreadFileSinks {
  /** Follows the log into `<dir>/<thread>/transcript.jsonl`. */
  transcript: TranscriptSink;
  /** `<dir>/<thread>/knowledge.md`: deltas live, re-rendered at each step. */
  knowledge: KnowledgeSink;
  /** The seq of the thread's `thread.started`: where its events begin (knowledge re-renders). */
  startSeq: number;
}

/** Options of `createThreadFiles`. */
export interface ThreadFilesOptions {
  store: EventStore;
  continuity: string;
  /** The threads directory: each thread's files go in `<dir>/<thread>/`. */
  dir: string;
}

/**
 * The `transcript.jsonl` and `knowledge.md` of the threads of one continuity, written while they
 * run (`<dir>/<thread>/`), one pair per thread, made on first use and kept until `closeEnded`
 * or `close`. A thread's transcript goes on from its file when there is one (after a crash, a
 * resume or another process's run: the file is cut back to its last whole event and caught up
 * from the log) and starts at the thread's `thread.started` when there is none, so it never
 * reads the continuity's history before the thread. Either way the file equals
 * `spool transcript <thread>`'s rebuild. A file that cannot be written fails its sink alone
 * (`sink.failed` on the step), never the run.
 */
export class ThreadFiles {
  readonly #options: ThreadFilesOptions;
  readonly #open = new Map<string, Promise<ThreadFileSinks>>();

  constructor(options: ThreadFilesOptions) {
    this.#options = options;
  }

  /** The directory of `thread`'s files. */
  dirOf(thread: string): string {
    return join(this.#options.dir, thread);
  }

  /** The sinks of `thread`, opened on first use. Rejects only when the store fails. */
  sinks(thread: string): Promise<ThreadFileSinks> {
    let found = this.#open.get(thread);
    if (!found) {
      found = this.#openSinks(thread);
      this.#open.set(thread, found);
      found.catch(() => this.#open.delete(thread));
    }
    return found;
  }

  /**
   * Closes the files of the threads `ended` says have ended (each caught up to the store's head
   * and its knowledge re-rendered with the thread's final status), so a long chat does not keep
   * following every thread it ever ran. Never rejects: a failed file is the file's own matter.
   */
  async closeEnded(ended: (thread: string) => boolean): Promise<void> {
    const closing = [...this.#open.keys()].filter(ended).map((thread) => this.#closeOne(thread));
    await Promise.all(closing);
  }

  /** Closes every thread's files; never rejects. */
  async close(): Promise<void> {
    await Promise.all([...this.#open.keys()].map((thread) => this.#closeOne(thread)));
  }

  async #closeOne(thread: string): Promise<void> {
    const opened = this.#open.get(thread);
    this.#open.delete(thread);
    const sinks = await opened?.catch(() => undefined);
    if (!sinks) return;
    const { store, continuity } = this.#options;
    await sinks.transcript.close().catch(() => undefined);
    await sinks.knowledge
      .checkpoint({ store, continuity, after: sinks.startSeq - 1 })
      .catch(() => undefined);
    await sinks.knowledge.close().catch(() => undefined);
  }

  async #openSinks(thread: string): Promise<ThreadFileSinks> {
    const { store, continuity } = this.#options;
    let startSeq = 1;
    for await (const event of store.read({
      continuity,
      stream: { kind: "thread", id: thread },
      types: ["thread.started"],
      limit: 1,
    })) {
      startSeq = event.seq;
    }
    const dir = this.dirOf(thread);
    const path = join(dir, "transcript.jsonl");
    const transcript = createTranscriptSink({
      store,
      continuity,
      thread,
      path,
      // Without a file, the thread's lines begin at its start: nothing before it is read.
      ...(existsSync(path) ? {} : { fromSeq: startSeq - 1 }),
    });
    const knowledge = createKnowledgeSink({ path: join(dir, "knowledge.md"), thread });
    return { transcript, knowledge, startSeq };
  }
}

/** Options of `resolveThreadsDir`. */
export interface ThreadsDirOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  /** The store as `--db` gives it (else `SPOOL_DB`, else `<cwd>/.spool/`). */
  db?: string;
}

/**
 * Where runs write their threads' live files: `threads/` beside a SQLite store (so
 * `.spool/threads/` by default) and `<cwd>/.spool/threads/` for a PostgreSQL store. Touches
 * nothing but a `stat` of the store path.
 */
export function resolveThreadsDir(options: ThreadsDirOptions): string {
  const location = resolveStoreLocation({ db: options.db, cwd: options.cwd, env: options.env });
  if (location.kind === "postgres") return join(resolve(options.cwd), ".spool", "threads");
  return join(dirname(sqlitePaths(location.target).file), "threads");
}
