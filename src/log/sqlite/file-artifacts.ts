import { createHash, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { StoreError } from "../../spec/index.js";
import { artifactNotFound, checkArtifactHash, resolveRange } from "../artifact-range.js";
import type {
  ArtifactInfo,
  ArtifactStore,
  ByteRange,
  PutArtifactOptions,
} from "../artifact-store.js";
import { sqliteError } from "./sqlite-errors.js";

const READ_CHUNK = 256 * 1024;
/** Artifacts up to this size, given whole, are kept in the database rather than as files. */
export const INLINE_ARTIFACT_MAX = 64 * 1024;

interface ArtifactRow {
  hash: string;
  size: number;
  media_type: string;
  created_at: string;
}

/**
 * Artifacts as files beside the SQLite database (`artifacts/ab/<hash>`), indexed in its
 * `artifacts` table. A file is written to `tmp/`, synced and renamed into place before its row is
 * committed, so a row always names a whole file; a crash leaves at most an orphan file that a
 * later put of the same content reuses. A small artifact given whole (at most
 * `INLINE_ARTIFACT_MAX` bytes: bundle manifests, system prompts) is kept in the database instead,
 * its content and its row committed in one transaction.
 */
export class FileArtifactStore implements ArtifactStore {
  readonly #dir: string;
  readonly #sync: boolean;
  readonly #select: Database.Statement<[string], ArtifactRow>;
  readonly #insert: Database.Statement<[string, number, string, string]>;
  readonly #insertBlob: Database.Statement<[string, Uint8Array]>;
  readonly #selectBlob: Database.Statement<[string], Buffer>;
  readonly #putInline: (hash: string, content: Uint8Array, mediaType: string) => void;

  /** `sync`: fsync each file before its row commits; `readOnly`: the store only reads (no folders made). */
  constructor(db: Database.Database, dir: string, options: { sync: boolean; readOnly?: boolean }) {
    this.#dir = dir;
    this.#sync = options.sync;
    if (!options.readOnly) mkdirSync(join(dir, "tmp"), { recursive: true });
    this.#select = db.prepare(
      "SELECT hash, size, media_type, created_at FROM artifacts WHERE hash = ?",
    );
    this.#insert = db.prepare(
      "INSERT OR IGNORE INTO artifacts (hash, size, media_type, created_at) VALUES (?, ?, ?, ?)",
    );
    this.#insertBlob = db.prepare(
      "INSERT OR IGNORE INTO artifact_blobs (hash, content) VALUES (?, ?)",
    );
    this.#selectBlob = db
      .prepare<[string], Buffer>("SELECT content FROM artifact_blobs WHERE hash = ?")
      .pluck();
    this.#putInline = db.transaction((hash: string, content: Uint8Array, mediaType: string) => {
      this.#insertBlob.run(hash, content);
      this.#insert.run(hash, content.byteLength, mediaType, new Date().toISOString());
    });
  }

  async put(
    content: Uint8Array | AsyncIterable<Uint8Array>,
    options: PutArtifactOptions = {},
  ): Promise<ArtifactInfo> {
    try {
      return await this.#put(content, options);
    } catch (error) {
      throw storageFailure(error, this.#dir);
    }
  }

  async #put(
    content: Uint8Array | AsyncIterable<Uint8Array>,
    options: PutArtifactOptions,
  ): Promise<ArtifactInfo> {
    if (content instanceof Uint8Array && content.byteLength <= INLINE_ARTIFACT_MAX) {
      const hash = createHash("sha256").update(content).digest("hex");
      const existing = this.#select.get(hash);
      if (existing) return toInfo(existing);
      this.#putInline(hash, content, options.mediaType ?? "application/octet-stream");
      return toInfo(this.#select.get(hash)!);
    }
    const temp = join(this.#dir, "tmp", randomUUID());
    const hasher = createHash("sha256");
    let size = 0;
    const file = await open(temp, "wx");
    try {
      const chunks = content instanceof Uint8Array ? [content] : content;
      for await (const chunk of chunks) {
        hasher.update(chunk);
        size += chunk.byteLength;
        await file.write(chunk);
      }
      if (this.#sync) await file.sync();
    } catch (error) {
      await file.close();
      await rm(temp, { force: true });
      throw error;
    }
    await file.close();
    const hash = hasher.digest("hex");
    const existing = this.#select.get(hash);
    if (existing) {
      await rm(temp, { force: true });
      return toInfo(existing);
    }
    const folder = join(this.#dir, hash.slice(0, 2));
    await mkdir(folder, { recursive: true });
    await rename(temp, join(folder, hash));
    if (this.#sync) await syncDirectory(folder);
    this.#insert.run(
      hash,
      size,
      options.mediaType ?? "application/octet-stream",
      new Date().toISOString(),
    );
    return toInfo(this.#select.get(hash)!);
  }

  async get(hash: string, range?: ByteRange): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.stream(hash, range)) parts.push(part);
    return Buffer.concat(parts);
  }

  async *stream(hash: string, range?: ByteRange): AsyncIterable<Buffer> {
    const info = await this.#require(hash);
    const { start, end } = resolveRange(range, info.size);
    const inline = this.#selectBlob.get(hash);
    if (inline) {
      if (end > start) yield inline.subarray(start, end);
      return;
    }
    const path = join(this.#dir, hash.slice(0, 2), hash);
    const file = await open(path, "r").catch((error: unknown) => {
      throw new StoreError(
        "store.io",
        `artifact ${hash} is indexed but its file ${path} cannot be read`,
        {
          cause: error,
          hint: "Restore the artifacts directory from a backup",
        },
      );
    });
    try {
      for (let position = start; position < end; ) {
        const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, end - position));
        const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0)
          throw new StoreError("store.io", `artifact ${hash} is shorter on disk than recorded`, {
            hint: "Restore it from a backup",
          });
        position += bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await file.close();
    }
  }

  async stat(hash: string): Promise<ArtifactInfo | undefined> {
    checkArtifactHash(hash);
    const row = this.#select.get(hash);
    return row ? toInfo(row) : undefined;
  }

  async has(hash: string): Promise<boolean> {
    return (await this.stat(hash)) !== undefined;
  }

  async #require(hash: string): Promise<ArtifactInfo> {
    const info = await this.stat(hash);
    if (!info) throw artifactNotFound(hash);
    return info;
  }
}

/**
 * Disk and database failures become `StoreError`s; anything else (an error thrown by the caller's
 * content stream) passes through unchanged.
 */
function storageFailure(error: unknown, dir: string): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string") return error;
  if (code.startsWith("SQLITE")) return sqliteError(error, dir);
  if (!/^E[A-Z]+$/.test(code)) return error;
  return new StoreError("store.io", `cannot write an artifact under ${dir} (${code})`, {
    cause: error,
    retryable: code === "ENOSPC" || code === "EAGAIN" || code === "EMFILE",
    hint:
      code === "ENOSPC"
        ? "Free space on that disk"
        : "Check that the directory exists and is writable",
  });
}

function toInfo(row: ArtifactRow): ArtifactInfo {
  return { hash: row.hash, size: row.size, mediaType: row.media_type, createdAt: row.created_at };
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
