import { basename, dirname } from "node:path";
import { type BatchedEmitter, SourceStopped } from "./batched-emitter.js";
import { ChangeWaiter } from "./change-waiter.js";
import {
  type FileCursor,
  FollowedFile,
  findRotated,
  identityAt,
  lastLineStart,
  parseFileCursor,
} from "./followed-file.js";
import { errorCode, unreadableMessage } from "./read-errors.js";
import type { SourceContext, SourceRotatedEmission } from "./source-types.js";

/** The buffer each read fills: a file of any size streams through this much memory. */
const READ_BUFFER_BYTES = 256 * 1024;

/** How a file tail is set up. */
export interface FileTailSettings {
  path: string;
  from: "start" | "end";
  pollMs: number;
  maxLineBytes: number;
}

/** What the path names now, compared with the file followed. */
type PathState = "same" | "replaced" | "deleted" | "truncated";

/** A rotation waiting for the file to appear again. */
type PendingRotation = Pick<SourceRotatedEmission, "reason" | "detail">;

/**
 * Follows one path like `tail -F`: reads the file it names to its end, then waits for a change
 * (directory watch or poll), and notices when the path comes to name another file (renamed away
 * and created again: the old one is read to its end first), when the file is truncated in place
 * (copytruncate) or deleted. One object per run; `run` never throws.
 */
export class FileTail {
  readonly #settings: FileTailSettings;
  readonly #context: SourceContext;
  readonly #out: BatchedEmitter;
  readonly #waiter: ChangeWaiter;
  readonly #buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  #file: FollowedFile | undefined;
  #pending: PendingRotation | undefined;
  #lastChange = "";

  constructor(settings: FileTailSettings, context: SourceContext, out: BatchedEmitter) {
    this.#settings = settings;
    this.#context = context;
    this.#out = out;
    this.#waiter = new ChangeWaiter(
      dirname(settings.path),
      basename(settings.path),
      context.signal,
    );
  }

  /** Reads until the signal aborts or the file cannot be read; never throws. */
  async run(): Promise<void> {
    try {
      this.#waiter.watch();
      await this.#begin();
      while (!this.#context.signal.aborted) {
        const file = this.#file;
        if (file === undefined) {
          await this.#awaitCreation();
          continue;
        }
        if (await this.#readToEnd(file)) {
          await this.#restart(file);
          continue;
        }
        await this.#out.flushIfDue();
        const state = await this.#pathState(file);
        if (state === "same") await this.#waiter.wait(this.#out.waitMs(this.#settings.pollMs));
        else await this.#rotate(file, state);
      }
    } catch (error) {
      if (!(error instanceof SourceStopped)) await this.#fail(error);
    } finally {
      this.#waiter.close();
      await this.#file?.close();
      this.#file = undefined;
    }
  }

  /** Opens the file where the cursor (or the `from` setting) says to begin. */
  async #begin(): Promise<void> {
    const logged = this.#context.cursor;
    const cursor = logged === undefined ? undefined : parseFileCursor(logged);
    if (logged !== undefined && cursor === undefined) {
      await this.#out.send({
        type: "notice",
        code: "source.cursor-invalid",
        message: `the logged cursor ${JSON.stringify(logged).slice(0, 200)} is not a file cursor ({dev, ino, offset, head}); reading ${this.#settings.path} from its start`,
      });
    }
    const current = await this.#tryOpen();
    if (cursor === undefined) {
      if (current === undefined) return this.#announceWaiting();
      this.#file = current;
      if (logged === undefined && this.#settings.from === "end") await this.#skipToEnd(current);
      return;
    }
    await this.#resume(cursor, current);
  }

  /** Resumes at `cursor`: in the file at the path, in its rotated self nearby, or anew. */
  async #resume(cursor: FileCursor, current: FollowedFile | undefined): Promise<void> {
    if (current?.is(cursor)) {
      this.#file = current;
      if (await current.holds(cursor)) return current.seek(cursor.offset);
      await this.#out.send({
        type: "rotated",
        reason: "truncated",
        cursor: current.cursor(0),
        detail: `${this.#settings.path} is shorter than the cursor's offset ${cursor.offset} or its first bytes changed: reading it from its start`,
      });
      return;
    }
    const rotated = await findRotated(
      dirname(this.#settings.path),
      cursor,
      this.#settings.maxLineBytes,
    );
    if (rotated !== undefined) {
      await current?.close();
      this.#file = rotated;
      return;
    }
    const pending: PendingRotation = {
      reason: "recreated",
      detail: `the file the cursor was in (device ${cursor.dev}, inode ${cursor.ino}) is gone from ${dirname(this.#settings.path)}: reading ${basename(this.#settings.path)} from its start`,
    };
    if (current === undefined) {
      this.#pending = pending;
      return this.#announceWaiting();
    }
    this.#file = current;
    await this.#out.send({ type: "rotated", ...pending, cursor: current.cursor(0) });
  }

  /**
   * Begins at the file's last line: the bytes before it are logged at once as a chunk with no
   * lines, so a restart before the first line resumes here instead of skipping to a later end.
   */
  async #skipToEnd(file: FollowedFile): Promise<void> {
    const start = await lastLineStart(file);
    if (start === 0) return;
    await file.seek(start);
    await this.#out.send({ type: "chunk", lines: [], bytes: start, cursor: file.cursor() });
  }

  async #announceWaiting(): Promise<void> {
    await this.#out.send({
      type: "notice",
      code: "source.waiting",
      message: `${this.#settings.path} does not exist (yet): waiting for it to be created`,
    });
  }

  /** Waits for the path to name a file, then follows it from 0. */
  async #awaitCreation(): Promise<void> {
    const file = await this.#tryOpen();
    if (file === undefined) {
      this.#waiter.watch();
      await this.#waiter.wait(this.#settings.pollMs);
      return;
    }
    this.#file = file;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined)
      await this.#out.send({ type: "rotated", ...pending, cursor: file.cursor(0) });
  }

  /**
   * Reads `file` from `readPos` to its current end, emitting the chunks its lines complete; true
   * when a read found it truncated and written again (what that read got is dropped: it lies
   * at the old offset of other content), so it must be read again from 0.
   */
  async #readToEnd(file: FollowedFile): Promise<boolean> {
    for (;;) {
      if (this.#context.signal.aborted) throw new SourceStopped();
      const count = await file.read(this.#buffer);
      if (count === "rewritten") return true;
      if (count === 0) return false;
      for (const line of file.splitter.push(this.#buffer.subarray(0, count))) {
        file.offset += line.bytes;
        await this.#out.add(line, file.cursor());
      }
      await this.#out.flushIfDue();
    }
  }

  /** Delivers the partial last line of a file that will grow no more, then the held chunk. */
  async #finish(file: FollowedFile): Promise<void> {
    for (const line of file.splitter.end()) {
      file.offset += line.bytes;
      await this.#out.add(line, file.cursor());
    }
    await this.#out.flush();
  }

  /** What the path names now, compared with `file`. */
  async #pathState(file: FollowedFile): Promise<PathState> {
    const now = await identityAt(this.#settings.path);
    const linked = (await file.links()) > 0;
    if (now === undefined) return linked ? "same" : "deleted";
    if (!file.is(now)) {
      // Renamed away: the writer may still append to the old file until it reopens; switch once
      // the new one has data (or the old one is gone).
      return !linked || now.size > 0 ? "replaced" : "same";
    }
    if (now.size < file.readPos) return "truncated";
    if (now.change !== this.#lastChange) {
      this.#lastChange = now.change;
      if (!(await file.startUnchanged())) return "truncated";
    }
    return "same";
  }

  /**
   * Handles a change of what the path names; reading goes on in the new file from 0. A file
   * renamed away or deleted is read to its end first, and from 0 again if it was truncated
   * before that (copytruncate, then a rename before the reader looked): its new lines are read.
   */
  async #rotate(file: FollowedFile, state: Exclude<PathState, "same">): Promise<void> {
    if (state === "truncated") return this.#restart(file);
    while ((await this.#readToEnd(file)) || (await file.rewritten())) await this.#restart(file);
    await this.#finish(file);
    const linked = (await file.links()) > 0;
    this.#file = undefined;
    await file.close();
    if (!linked) {
      await this.#out.send({ type: "rotated", reason: "deleted", cursor: file.cursor() });
      this.#pending = { reason: "recreated" };
      if (state === "replaced") await this.#awaitCreation();
      return;
    }
    this.#pending = { reason: "renamed" };
    await this.#awaitCreation();
  }

  /** `file` was truncated: its held partial line goes out, then `rotated` (`truncated`), from 0. */
  async #restart(file: FollowedFile): Promise<void> {
    await this.#finish(file);
    await file.seek(0);
    this.#lastChange = "";
    await this.#out.send({ type: "rotated", reason: "truncated", cursor: file.cursor(0) });
  }

  /** Opens the path; undefined when it names nothing. Other errors are thrown. */
  async #tryOpen(): Promise<FollowedFile | undefined> {
    try {
      return await FollowedFile.open(this.#settings.path, this.#settings.maxLineBytes);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return undefined;
      throw error;
    }
  }

  async #fail(error: unknown): Promise<void> {
    const failure = {
      type: "failed" as const,
      code: "source.unreadable",
      message: unreadableMessage(this.#settings.path, error),
    };
    const file = this.#file;
    await this.#out.fail(file === undefined ? failure : { ...failure, cursor: file.cursor() });
  }
}
