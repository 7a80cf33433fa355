import type { IndexOperation, MemoryEntry } from "./memory-entry.js";

/** Which entries a search may return. */
export interface MemoryScope {
  /** Only entries of continuities this actor took part in (added to it, or added a turn). */
  actor?: string;
  /** Never entries of these continuities (the one asking, usually). */
  exclude?: readonly string[];
}

/** An entry a backend found, with its rank score (higher is better) in that backend's measure. */
export interface ScoredEntry {
  entry: MemoryEntry;
  score: number;
}

/**
 * Where the memory index is kept: tables beside the log (PostgreSQL) or in a sibling SQLite
 * file. The index is derived state: everything in it comes from the log through `apply`, and
 * `clear` may drop it at any time.
 *
 * Contract: `apply` writes a batch of operations and the log position they reach in one
 * transaction, skipping the operations of events at or below the position already stored (so two
 * processes catching up at once never apply an event twice out of order); `search` never fails
 * on its terms (they come from `queryTerms`).
 */
export interface MemoryBackend {
  readonly kind: "sqlite" | "postgres";
  /** The log position (seq) the index reflects: every event up to it has been applied. */
  position(): Promise<number>;
  /**
   * Applies `operations` (each with the seq of the event it came from, ascending) and moves the
   * position to `position`; operations at or below the stored position are skipped.
   */
  apply(
    operations: readonly { seq: number; operation: IndexOperation }[],
    position: number,
  ): Promise<void>;
  /** The best `limit` entries for any of `terms`, by full-text rank, within `scope`. */
  search(terms: readonly string[], scope: MemoryScope, limit: number): Promise<ScoredEntry[]>;
  /** Entries with no vector for `model` yet, oldest first, at most `limit`. */
  unembedded(model: string, limit: number): Promise<MemoryEntry[]>;
  /** Stores vectors of entries (by id) for `model`. */
  storeVectors(
    model: string,
    vectors: readonly { id: string; vector: Float32Array }[],
  ): Promise<void>;
  /** The `limit` entries nearest `vector` (cosine) among those with a vector for `model`, within `scope`. */
  nearest(
    model: string,
    vector: Float32Array,
    scope: MemoryScope,
    limit: number,
  ): Promise<ScoredEntry[]>;
  /** How many entries the index holds. */
  count(): Promise<number>;
  /**
   * Makes searches cheaper after many writes (SQLite merges the FTS5 segments into one); the
   * index calls it after a catch-up that read many events. Optional: a backend without it needs none.
   */
  compact?(): Promise<void>;
  /** Drops every entry, actor and vector and puts the position back to 0. */
  clear(): Promise<void>;
  close(): Promise<void>;
}

/** Cosine similarity of two vectors of the same length (0 when either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a[index]!;
    const y = b[index]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** A vector as stored bytes (little-endian float32), and back. */
export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** The vector a stored byte string holds. */
export function bytesVector(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4));
}

/** Keeps the `limit` best of scored items while they stream by (a small sorted buffer). */
export class TopK<T> {
  readonly #items: { item: T; score: number }[] = [];
  constructor(readonly limit: number) {}

  offer(item: T, score: number): void {
    const items = this.#items;
    if (items.length >= this.limit && score <= items[items.length - 1]!.score) return;
    let index = items.length;
    while (index > 0 && items[index - 1]!.score < score) index--;
    items.splice(index, 0, { item, score });
    if (items.length > this.limit) items.pop();
  }

  /** Best first. */
  result(): { item: T; score: number }[] {
    return [...this.#items];
  }
}
