// @ts-check
// Plain JavaScript that imports no TypeScript module: the writer thread (sqlite-writer-thread.js)
// runs it as it is, and the store's own thread runs the same code for small writes.
import { canonicalText, chainHash, GENESIS_HASH } from "../../spec/chain-link.js";

/**
 * Strings per event in a chunk's flat field list, in this order: id, continuity, stream kind,
 * stream id, type, ts, actor, origin, criticality, data (canonical JSON). A missing actor or
 * origin is the empty string (both are non-empty when present).
 */
export const FIELDS = 10;

/** Rows per multi-row INSERT (12 parameters each, within SQLite's 32,766-parameter limit). */
const INSERT_ROWS = 100;

/** The `events` table's columns, in the order rows are written and read. */
export const COLUMNS =
  "seq, id, continuity, stream_kind, stream_id, type, ts, actor, origin, criticality, data, hash";
/** The `continuities` table's columns. */
export const HEAD_COLUMNS =
  "continuity, events, first_seq, last_seq, created_at, last_at, head_hash";
/**
 * Joins a chunk's strings into one for the thread boundary: no field can hold it (ids and names
 * exclude control characters; JSON escapes them).
 */
export const SEPARATOR = "\u0001";
const ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/**
 * @typedef {object} WriteResult
 * @property {number} firstSeq The seq given to the batch's first event.
 * @property {string[] | undefined} hashes Every chain hash of the batch, when the writer linked
 *   some of it itself: because the caller left it to the writer, or because a head the caller
 *   linked onto had moved (another connection wrote to that continuity); `undefined` when the
 *   caller's hashes were stored as given.
 */

/**
 * @typedef {object} Touched A continuity's part of the batch.
 * @property {number} events
 * @property {number} firstSeq
 * @property {string} createdAt
 * @property {number} lastSeq
 * @property {string} lastAt
 * @property {string} head
 */

/**
 * Writes batches of events to a Spool log's SQLite file, one `BEGIN IMMEDIATE` transaction per
 * batch, a chunk at a time: `begin()`, `add()` for each chunk, then `commit()` (or `rollback()`).
 * Seqs are taken inside the transaction, so commit order is seq order across connections and
 * processes.
 *
 * The caller may link the chains itself (so that hashing overlaps with the writer's work) onto
 * the heads it last knew, saying which (`expected`). The writer checks them under the write lock;
 * if another connection moved one meanwhile, it links that continuity's events again onto the
 * head it finds, so a stored chain is always whole. Or the caller leaves the linking to the
 * writer, which links onto the heads it finds.
 */
export class BatchWriter {
  #insertOne;
  #insertMany;
  #headOf;
  #upsertHead;
  #maxSeq;
  #begin;
  #leaseOf;
  #commit;
  #rollback;
  /** @type {import("better-sqlite3").Database} */
  #db;
  /** Parameters of one `#insertMany`, refilled for every statement. */
  #values = /** @type {unknown[]} */ (new Array(INSERT_ROWS * 12));
  /** Parameters of one `#insertOne`. */
  #oneRow = /** @type {unknown[]} */ (new Array(12));
  /** The open batch, between `begin()` and `commit()`. */
  #batch =
    /** @type {{ firstSeq: number, next: number, hashes: string[], linked: boolean, moved: Map<string, string>, touched: Map<string, Touched> } | undefined} */ (
      undefined
    );

  /** @param {import("better-sqlite3").Database} db */
  constructor(db) {
    this.#db = db;
    this.#insertOne = db.prepare(`INSERT INTO events (${COLUMNS}) VALUES ${ROW}`);
    this.#insertMany = db.prepare(
      `INSERT INTO events (${COLUMNS}) VALUES ${Array(INSERT_ROWS).fill(ROW).join(", ")}`,
    );
    this.#headOf = db.prepare("SELECT head_hash FROM continuities WHERE continuity = ?").pluck();
    this.#upsertHead = db.prepare(
      `INSERT INTO continuities (${HEAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (continuity) DO UPDATE SET events = events + excluded.events, last_seq = excluded.last_seq,
         last_at = excluded.last_at, head_hash = excluded.head_hash`,
    );
    this.#maxSeq = db.prepare("SELECT max(seq) FROM events").pluck();
    this.#begin = db.prepare("BEGIN IMMEDIATE");
    this.#leaseOf = db.prepare("SELECT token, holder FROM leases WHERE continuity = ?").raw(true);
    this.#commit = db.prepare("COMMIT");
    this.#rollback = db.prepare("ROLLBACK");
  }

  /**
   * The committed head hash of `continuity` (the genesis hash when it has no events).
   * @param {string} continuity
   * @returns {string}
   */
  head(continuity) {
    return /** @type {string | undefined} */ (this.#headOf.get(continuity)) ?? GENESIS_HASH;
  }

  /**
   * Opens a batch's transaction, taking the database's write lock. With `fences`, checks under
   * that lock that each token is its continuity's current lease token; when one is not, ends the
   * transaction and throws an error with code `SPOOL_LEASE_LOST`.
   * With `expectFirst`, checks under that lock that the batch's first seq is that one; when it is
   * not (something else was written since the caller predicted it), ends the transaction and
   * throws an error with code `SPOOL_SEQ_MOVED`.
   * @param {readonly { continuity: string, token: number }[]} [fences]
   * @param {number} [expectFirst]
   */
  begin(fences, expectFirst) {
    if (this.#batch) throw new Error("a batch is already open");
    this.#begin.run();
    if (fences) {
      for (const fence of fences) {
        const row = /** @type {[number, string | null] | undefined} */ (
          this.#leaseOf.get(fence.continuity)
        );
        if (row && row[0] === fence.token && row[1] !== null) continue;
        this.#rollback.run();
        const now =
          row === undefined
            ? "nobody holds it"
            : row[1] === null
              ? `it was released (token ${row[0]})`
              : `${row[1]} holds it with token ${row[0]}`;
        throw Object.assign(
          new Error(
            `the lease on continuity ${fence.continuity} with token ${fence.token} is no longer current: ${now}`,
          ),
          { code: "SPOOL_LEASE_LOST" },
        );
      }
    }
    const firstSeq = /** @type {number | null} */ (this.#maxSeq.get()) ?? 0;
    if (expectFirst !== undefined && firstSeq + 1 !== expectFirst) {
      this.#rollback.run();
      throw Object.assign(
        new Error(
          `the batch was to be written at seq ${expectFirst}, but the log's next seq is ${firstSeq + 1}: something else was written first`,
        ),
        { code: "SPOOL_SEQ_MOVED" },
      );
    }
    this.#batch = {
      firstSeq: firstSeq + 1,
      next: firstSeq + 1,
      hashes: [],
      linked: false,
      moved: new Map(),
      touched: new Map(),
    };
  }

  /**
   * Inserts the next chunk of the open batch.
   * @param {readonly string[]} fields `FIELDS` strings per event.
   * @param {readonly string[] | null} hashes Each event's chain hash as the caller linked it, or
   *   `null` to have the writer link them (a batch is linked by one or the other throughout).
   * @param {readonly string[]} expected Flat pairs: a continuity whose first event in the batch
   *   is in this chunk, and the head the caller linked that event onto.
   */
  add(fields, hashes, expected) {
    const batch = this.#batch;
    if (!batch) throw new Error("no batch is open");
    if (fields.length % FIELDS !== 0 || (hashes && fields.length !== hashes.length * FIELDS))
      throw new Error("malformed chunk");
    for (let i = 0; i < expected.length; i += 2) {
      const continuity = /** @type {string} */ (expected[i]);
      const found = this.head(continuity);
      if (found !== expected[i + 1]) batch.moved.set(continuity, found);
    }
    // One reused parameter array per statement size: `run` binds it at once, before returning.
    const values = this.#values;
    const one = this.#oneRow;
    let filled = 0;
    for (let at = 0; at < fields.length; at += FIELDS) {
      const id = /** @type {string} */ (fields[at]);
      const continuity = /** @type {string} */ (fields[at + 1]);
      const kind = /** @type {string} */ (fields[at + 2]);
      const streamId = /** @type {string} */ (fields[at + 3]);
      const type = /** @type {string} */ (fields[at + 4]);
      const ts = /** @type {string} */ (fields[at + 5]);
      const actor = fields[at + 6] || null;
      const origin = fields[at + 7] || null;
      const criticality = /** @type {string} */ (fields[at + 8]);
      const data = /** @type {string} */ (fields[at + 9]);
      let hash = /** @type {string} */ (hashes?.[at / FIELDS]);
      const moved = batch.moved.get(continuity);
      if (!hashes || moved !== undefined) {
        const previous = moved ?? batch.touched.get(continuity)?.head ?? this.head(continuity);
        const canonical = canonicalText(
          id,
          continuity,
          kind,
          streamId,
          type,
          ts,
          actor,
          origin,
          criticality,
          data,
        );
        hash = chainHash(previous, canonical);
        if (moved !== undefined) batch.moved.set(continuity, hash);
        batch.linked = true;
      }
      const seq = batch.next++;
      batch.hashes.push(hash);
      values[filled] = seq;
      values[filled + 1] = id;
      values[filled + 2] = continuity;
      values[filled + 3] = kind;
      values[filled + 4] = streamId;
      values[filled + 5] = type;
      values[filled + 6] = ts;
      values[filled + 7] = actor;
      values[filled + 8] = origin;
      values[filled + 9] = criticality;
      values[filled + 10] = data;
      values[filled + 11] = hash;
      filled += 12;
      if (filled === INSERT_ROWS * 12) {
        this.#insertMany.run(values);
        filled = 0;
      }
      const seen = batch.touched.get(continuity);
      if (seen) {
        seen.events += 1;
        seen.lastSeq = seq;
        seen.lastAt = ts;
        seen.head = hash;
      } else {
        batch.touched.set(continuity, {
          events: 1,
          firstSeq: seq,
          createdAt: ts,
          lastSeq: seq,
          lastAt: ts,
          head: hash,
        });
      }
    }
    for (let offset = 0; offset < filled; offset += 12) {
      for (let k = 0; k < 12; k++) one[k] = values[offset + k];
      this.#insertOne.run(one);
    }
  }

  /**
   * Moves the continuity heads and commits the open batch.
   * @returns {WriteResult}
   */
  commit() {
    const batch = this.#batch;
    if (!batch) throw new Error("no batch is open");
    for (const [continuity, t] of batch.touched)
      this.#upsertHead.run(
        continuity,
        t.events,
        t.firstSeq,
        t.lastSeq,
        t.createdAt,
        t.lastAt,
        t.head,
      );
    this.#commit.run();
    this.#batch = undefined;
    return { firstSeq: batch.firstSeq, hashes: batch.linked ? batch.hashes : undefined };
  }

  /** Abandons the open batch, if any; nothing of it is stored. */
  rollback() {
    if (!this.#batch) return;
    this.#batch = undefined;
    if (this.#db.inTransaction) this.#rollback.run();
  }
}
