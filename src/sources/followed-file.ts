import { createHash } from "node:crypto";
import { type FileHandle, open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { LineSplitter } from "./line-splitter.js";
import { errorCode, NotRegularFileError } from "./read-errors.js";
import type { SourceCursor } from "./source-types.js";

/** Bytes at the start of a file whose hash (`head`) tells a reused inode from the same file. */
export const HEAD_BYTES = 256;

/**
 * A file source's cursor: the file's identity (device and inode, as decimal strings so no
 * precision is lost), the byte offset after the last whole line delivered, and `head`, the sha256
 * (hex) of the file's first `min(256, offset)` bytes: bytes already read never change in a file
 * that only grows, so a different head means another file on a reused inode, or one rewritten.
 */
export interface FileCursor {
  dev: string;
  ino: string;
  offset: number;
  head: string;
}

/** A file's identity: device and inode as decimal strings. */
export interface FileIdentity {
  dev: string;
  ino: string;
}

/** Reads a logged cursor back, or undefined when it is not a file cursor. */
export function parseFileCursor(cursor: SourceCursor): FileCursor | undefined {
  const { dev, ino, offset, head } = cursor;
  if (typeof dev !== "string" || typeof ino !== "string" || typeof head !== "string") return;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) return;
  return { dev, ino, offset, head };
}

/** What `path` names now: its identity, size and `change` (size and times, to spot writes). */
export interface PathInfo extends FileIdentity {
  size: number;
  change: string;
}

/** What `path` names now; undefined when nothing is there. Other errors are thrown. */
export async function identityAt(path: string): Promise<PathInfo | undefined> {
  try {
    const info = await stat(path, { bigint: true });
    return {
      dev: String(info.dev),
      ino: String(info.ino),
      size: Number(info.size),
      change: `${info.size}:${info.mtimeNs}:${info.ctimeNs}`,
    };
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * One open file being read as lines: its handle, identity, how far it is read (`readPos`), how
 * far whole lines were delivered (`offset`), the splitter holding the partial last line, and the
 * first bytes that make up the cursor's `head`. Reads at explicit positions, so the handle keeps
 * reading the same file after it is renamed or deleted.
 */
export class FollowedFile {
  readonly handle: FileHandle;
  readonly identity: FileIdentity;
  /** Bytes delivered as whole lines: where the cursor stands. */
  offset = 0;
  /** Bytes read into the splitter (offset plus the partial line held). */
  readPos = 0;
  splitter: LineSplitter;
  readonly #maxLineBytes: number;
  #prefix: Buffer = Buffer.alloc(0);
  #headCache: string | undefined;

  private constructor(handle: FileHandle, identity: FileIdentity, maxLineBytes: number) {
    this.handle = handle;
    this.identity = identity;
    this.#maxLineBytes = maxLineBytes;
    this.splitter = new LineSplitter(maxLineBytes);
  }

  /**
   * Opens `path` for reading from 0. Throws the system error (ENOENT, EACCES, …), or
   * `NotRegularFileError` for a directory or device.
   */
  static async open(path: string, maxLineBytes: number): Promise<FollowedFile> {
    const handle = await open(path, "r");
    try {
      const info = await handle.stat({ bigint: true });
      if (!info.isFile()) throw new NotRegularFileError(path);
      return new FollowedFile(
        handle,
        { dev: String(info.dev), ino: String(info.ino) },
        maxLineBytes,
      );
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Whether this is the file `identity` names. */
  is(identity: FileIdentity): boolean {
    return this.identity.dev === identity.dev && this.identity.ino === identity.ino;
  }

  /** Starts reading at `offset` (a line start); reads the first bytes the head covers. */
  async seek(offset: number): Promise<void> {
    this.offset = offset;
    this.readPos = offset;
    this.splitter = new LineSplitter(this.#maxLineBytes);
    this.#prefix = await this.#readStart(Math.min(HEAD_BYTES, offset));
    this.#headCache = undefined;
  }

  /** Whether the file still holds what `cursor` read: size at least its offset, same head. */
  async holds(cursor: FileCursor): Promise<boolean> {
    const { size } = await this.handle.stat();
    if (size < cursor.offset) return false;
    const start = await this.#readStart(Math.min(HEAD_BYTES, cursor.offset));
    return hashHex(start) === cursor.head;
  }

  /** Whether the bytes read from the start are still there (no truncate-and-rewrite under us). */
  async startUnchanged(): Promise<boolean> {
    const start = await this.#readStart(this.#prefix.length);
    return start.equals(this.#prefix);
  }

  /**
   * Whether the file was truncated since it was read: shorter than what was read, or no longer
   * starting with the bytes read first (truncated and written again, past the read position).
   */
  async rewritten(): Promise<boolean> {
    const { size } = await this.handle.stat();
    return size < this.readPos || !(await this.startUnchanged());
  }

  /** The cursor after `offset` bytes (default: the whole lines delivered). */
  cursor(offset = this.offset): SourceCursor {
    return { dev: this.identity.dev, ino: this.identity.ino, offset, head: this.#head(offset) };
  }

  /**
   * Reads the next bytes at `readPos` into `buffer`; returns how many (0 at the end), or
   * `rewritten` when the file no longer starts with the bytes read before: it was truncated and
   * written again, so what lies at `readPos` now is not what follows the lines read (the bytes
   * are dropped, `readPos` stays). Checked after the read, so a truncation just before it is
   * seen too.
   */
  async read(buffer: Buffer): Promise<number | "rewritten"> {
    const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, this.readPos);
    if (bytesRead > 0 && this.#prefix.length > 0 && !(await this.startUnchanged())) {
      return "rewritten";
    }
    if (this.readPos < HEAD_BYTES && bytesRead > 0) {
      const take = Math.min(HEAD_BYTES - this.readPos, bytesRead);
      this.#prefix = Buffer.concat([this.#prefix, buffer.subarray(0, take)]);
      this.#headCache = undefined;
    }
    this.readPos += bytesRead;
    return bytesRead;
  }

  /** The number of names the file has left (0: it was deleted, though still readable here). */
  async links(): Promise<number> {
    return (await this.handle.stat()).nlink;
  }

  /** Closes the handle; never throws. */
  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }

  #head(offset: number): string {
    const length = Math.min(HEAD_BYTES, offset, this.#prefix.length);
    if (length === HEAD_BYTES) {
      this.#headCache ??= hashHex(this.#prefix.subarray(0, HEAD_BYTES));
      return this.#headCache;
    }
    return hashHex(this.#prefix.subarray(0, length));
  }

  async #readStart(length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await this.handle.read(buffer, filled, length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  }
}

/** The sha256 of `bytes`, hex. */
function hashHex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Finds, in `directory`, the regular file with `cursor`'s identity that still holds what the
 * cursor read (a rotated `app.log.1`), opened and positioned at the cursor's offset; undefined
 * when there is none. Never throws: an unreadable directory or entry counts as not found.
 */
export async function findRotated(
  directory: string,
  cursor: FileCursor,
  maxLineBytes: number,
): Promise<FollowedFile | undefined> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return undefined;
  }
  for (const name of names.sort()) {
    const path = join(directory, name);
    const found = await identityAt(path).catch(() => undefined);
    if (found?.dev !== cursor.dev || found.ino !== cursor.ino) continue;
    const file = await FollowedFile.open(path, maxLineBytes).catch(() => undefined);
    if (file === undefined) continue;
    if (file.is(cursor) && (await file.holds(cursor).catch(() => false))) {
      await file.seek(cursor.offset);
      return file;
    }
    await file.close();
  }
  return undefined;
}

/**
 * Where to begin reading a file "from its end": the start of its last partial line, so that line
 * is delivered whole once its newline arrives (the end itself if that line is longer than 64 KiB).
 */
export async function lastLineStart(file: FollowedFile): Promise<number> {
  const { size } = await file.handle.stat();
  const window = Math.min(size, 64 * 1024);
  const buffer = Buffer.alloc(window);
  const { bytesRead } = await file.handle.read(buffer, 0, window, size - window);
  const newline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
  if (newline >= 0) return size - window + newline + 1;
  return window === size ? 0 : size;
}
