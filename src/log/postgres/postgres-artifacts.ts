import { createHash, randomUUID } from "node:crypto";
import type pg from "pg";
import { StoreError } from "../../spec/index.js";
import { artifactNotFound, checkArtifactHash, resolveRange } from "../artifact-range.js";
import type {
  ArtifactInfo,
  ArtifactStore,
  ByteRange,
  PutArtifactOptions,
} from "../artifact-store.js";
import { inTransaction } from "./postgres-pool.js";
import type { PostgresTables } from "./postgres-schema.js";

/** Artifacts are stored in rows of this many bytes (the last one shorter). */
export const ARTIFACT_CHUNK_BYTES = 256 * 1024;

const DEFAULT_MEDIA_TYPE = "application/octet-stream";

interface ArtifactRow {
  hash: string;
  size: string;
  media_type: string;
  created_at: string;
}

/** What the artifact store needs from its backend. */
export interface PostgresArtifactContext {
  pool: pg.Pool;
  tables: PostgresTables;
  /** Opens a put's transaction (`BEGIN` and the store's durability setting). */
  begin: string;
  /** Throws `store.closed` once the backend is closed. */
  checkOpen(): void;
  /** Maps a driver error to a `StoreError`. */
  toStoreError(error: unknown): StoreError;
}

/**
 * Artifacts inside the PostgreSQL database: one `spool_artifacts` row per content hash and its
 * bytes in `spool_artifact_chunks`, 256 KiB per row, so a range read fetches only the rows that
 * cover it.
 *
 * A put is one transaction: the artifact row and all its chunks commit together or not at all.
 * The artifact row is inserted with `ON CONFLICT DO NOTHING`, which waits for a concurrent put of
 * the same content to finish and then yields to it, so two puts of the same bytes store one copy
 * and both return the first one's info. A streamed put is never held in memory whole: its chunks
 * go to a temporary key while they are hashed and are renamed to the hash (or dropped, when the
 * content was already there) just before commit.
 */
export class PostgresArtifactStore implements ArtifactStore {
  readonly #context: PostgresArtifactContext;
  readonly #t: PostgresTables;

  constructor(context: PostgresArtifactContext) {
    this.#context = context;
    this.#t = context.tables;
  }

  async put(
    content: Uint8Array | AsyncIterable<Uint8Array>,
    options: PutArtifactOptions = {},
  ): Promise<ArtifactInfo> {
    this.#context.checkOpen();
    const mediaType = options.mediaType ?? DEFAULT_MEDIA_TYPE;
    try {
      if (content instanceof Uint8Array) return await this.#putBytes(content, mediaType);
      return await this.#putStream(content, mediaType);
    } catch (error) {
      // The caller's own stream failing is the caller's error, not a storage failure.
      if (error instanceof SourceFailure) throw error.cause;
      throw this.#context.toStoreError(error);
    }
  }

  async get(hash: string, range?: ByteRange): Promise<Buffer> {
    const info = await this.#require(hash);
    const { start, end } = resolveRange(range, info.size);
    if (start >= end) return Buffer.alloc(0);
    const first = Math.floor(start / ARTIFACT_CHUNK_BYTES);
    const last = Math.floor((end - 1) / ARTIFACT_CHUNK_BYTES);
    const rows = await this.#query<{ data: Buffer }>({
      name: "spool_artifact_chunk_range",
      text: `SELECT data FROM ${this.#t.chunks} WHERE hash = $1 AND idx BETWEEN $2 AND $3 ORDER BY idx`,
      values: [hash, first, last],
    });
    if (rows.length !== last - first + 1) throw damaged(hash);
    const base = first * ARTIFACT_CHUNK_BYTES;
    return Buffer.concat(rows.map((row) => row.data)).subarray(start - base, end - base);
  }

  async *stream(hash: string, range?: ByteRange): AsyncIterable<Buffer> {
    const info = await this.#require(hash);
    const { start, end } = resolveRange(range, info.size);
    for (let position = start; position < end; ) {
      const idx = Math.floor(position / ARTIFACT_CHUNK_BYTES);
      const rows = await this.#query<{ data: Buffer }>({
        name: "spool_artifact_chunk",
        text: `SELECT data FROM ${this.#t.chunks} WHERE hash = $1 AND idx = $2`,
        values: [hash, idx],
      });
      const data = rows[0]?.data;
      if (!data) throw damaged(hash);
      const base = idx * ARTIFACT_CHUNK_BYTES;
      const piece = data.subarray(position - base, Math.min(data.length, end - base));
      if (piece.length === 0) throw damaged(hash);
      position += piece.length;
      yield piece;
    }
  }

  async stat(hash: string): Promise<ArtifactInfo | undefined> {
    checkArtifactHash(hash);
    const rows = await this.#query<ArtifactRow>({
      name: "spool_artifact_stat",
      text: `SELECT hash, size, media_type, created_at FROM ${this.#t.artifacts} WHERE hash = $1`,
      values: [hash],
    });
    return rows[0] ? toInfo(rows[0]) : undefined;
  }

  async has(hash: string): Promise<boolean> {
    return (await this.stat(hash)) !== undefined;
  }

  async #putBytes(bytes: Uint8Array, mediaType: string): Promise<ArtifactInfo> {
    const hash = createHash("sha256").update(bytes).digest("hex");
    // The common repeat put costs one read and writes nothing.
    const existing = await this.stat(hash);
    if (existing) return existing;
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const info = { hash, size: bytes.byteLength, mediaType, createdAt: new Date().toISOString() };
    const stored = await inTransaction(
      this.#context.pool,
      async (client) => {
        if (!(await this.#claim(client, info))) return false;
        for (let idx = 0; idx * ARTIFACT_CHUNK_BYTES < view.length; idx += 1) {
          const offset = idx * ARTIFACT_CHUNK_BYTES;
          await this.#insertChunk(
            client,
            hash,
            idx,
            view.subarray(offset, offset + ARTIFACT_CHUNK_BYTES),
          );
        }
        return true;
      },
      this.#context.begin,
    );
    return stored ? info : this.#winner(hash);
  }

  async #putStream(source: AsyncIterable<Uint8Array>, mediaType: string): Promise<ArtifactInfo> {
    const upload = `upload:${randomUUID()}`;
    const result = await inTransaction(
      this.#context.pool,
      async (client) => {
        const hasher = createHash("sha256");
        let size = 0;
        let idx = 0;
        for await (const chunk of rechunk(source, ARTIFACT_CHUNK_BYTES)) {
          hasher.update(chunk);
          size += chunk.length;
          await this.#insertChunk(client, upload, idx++, chunk);
        }
        const info = {
          hash: hasher.digest("hex"),
          size,
          mediaType,
          createdAt: new Date().toISOString(),
        };
        const claimed = await this.#claim(client, info);
        await client.query(
          claimed
            ? {
                name: "spool_artifact_rename",
                text: `UPDATE ${this.#t.chunks} SET hash = $2 WHERE hash = $1`,
                values: [upload, info.hash],
              }
            : {
                name: "spool_artifact_discard",
                text: `DELETE FROM ${this.#t.chunks} WHERE hash = $1`,
                values: [upload],
              },
        );
        return { info, claimed };
      },
      this.#context.begin,
    );
    return result.claimed ? result.info : this.#winner(result.info.hash);
  }

  /** Inserts the artifact row; false when the content is already stored (or a concurrent put won). */
  async #claim(client: pg.ClientBase, info: ArtifactInfo): Promise<boolean> {
    const inserted = await client.query({
      name: "spool_artifact_claim",
      text: `INSERT INTO ${this.#t.artifacts} (hash, size, media_type, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (hash) DO NOTHING`,
      values: [info.hash, info.size, info.mediaType, info.createdAt],
    });
    return inserted.rowCount === 1;
  }

  async #insertChunk(client: pg.ClientBase, key: string, idx: number, data: Buffer): Promise<void> {
    // A Buffer parameter travels in binary, not as hex text.
    await client.query({
      name: "spool_artifact_chunk_insert",
      text: `INSERT INTO ${this.#t.chunks} (hash, idx, data) VALUES ($1, $2, $3)`,
      values: [key, idx, data],
    });
  }

  /** The info of the put that stored `hash` first. */
  async #winner(hash: string): Promise<ArtifactInfo> {
    const info = await this.stat(hash);
    if (!info) throw damaged(hash);
    return info;
  }

  async #require(hash: string): Promise<ArtifactInfo> {
    const info = await this.stat(hash);
    if (!info) throw artifactNotFound(hash);
    return info;
  }

  async #query<Row extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<Row[]> {
    this.#context.checkOpen();
    try {
      return (await this.#context.pool.query<Row>(query)).rows;
    } catch (error) {
      throw this.#context.toStoreError(error);
    }
  }
}

/**
 * Regroups a byte stream into blocks of exactly `size` bytes (the last one shorter), copying, so
 * a source that reuses its buffers cannot change what was already taken.
 */
async function* rechunk(source: AsyncIterable<Uint8Array>, size: number): AsyncIterable<Buffer> {
  let block = Buffer.allocUnsafe(size);
  let filled = 0;
  try {
    for await (const piece of source) {
      for (let offset = 0; offset < piece.byteLength; ) {
        const take = Math.min(size - filled, piece.byteLength - offset);
        block.set(piece.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === size) {
          yield block;
          block = Buffer.allocUnsafe(size);
          filled = 0;
        }
      }
    }
  } catch (error) {
    // Only the source can throw here: a consumer that stops early ends this generator by return().
    throw new SourceFailure(error);
  }
  if (filled > 0) yield block.subarray(0, filled);
}

/** Wraps an error thrown by the content stream a caller passed to `put`. */
class SourceFailure extends Error {
  constructor(cause: unknown) {
    super("the content stream failed", { cause });
  }
}

function damaged(hash: string): StoreError {
  return new StoreError(
    "store.io",
    `artifact ${hash} is recorded but some of its chunks are missing`,
    {
      hint: "Restore the database from a backup",
    },
  );
}

function toInfo(row: ArtifactRow): ArtifactInfo {
  return {
    hash: row.hash,
    size: Number(row.size),
    mediaType: row.media_type,
    createdAt: row.created_at,
  };
}
