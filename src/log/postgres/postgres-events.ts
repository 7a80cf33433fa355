import type pg from "pg";
import {
  type Criticality,
  type PreparedEvent,
  type SpoolEvent,
  StoreError,
  type StreamKind,
} from "../../spec/index.js";
import type { ContinuityHead, EventQuery } from "../event-store.js";
import type { EventPage } from "../log-backend.js";
import { seqMovedError } from "../seq-prediction.js";
import { checkStreamKind } from "../stream-kind.js";
import { BatchLinker } from "./postgres-batch.js";
import type { PostgresTables } from "./postgres-schema.js";

/** The channel every writer notifies with its new head after each commit. */
export const NOTIFY_CHANNEL = "spool_log";

/**
 * Events in the first INSERT statement of a write; each next chunk is twice as large, up to
 * `LARGEST_CHUNK`. A batch is sent in chunks so that hashing here and inserting on the server
 * overlap: a small first chunk sets the server to work early, larger later ones leave it less
 * idle between statements while this process is busy with other work.
 */
const FIRST_CHUNK = 250;
const LARGEST_CHUNK = 1_000;

const EVENT_COLUMNS =
  "seq, id, continuity, stream_kind, stream_id, type, ts, actor, origin, criticality, data, hash";

interface EventRow {
  seq: string;
  id: string;
  continuity: string;
  stream_kind: string;
  stream_id: string;
  type: string;
  ts: string;
  actor: string | null;
  origin: string | null;
  criticality: string;
  data: string;
  hash: string;
}

interface ContinuityRow {
  continuity: string;
  events: string;
  first_seq: string;
  last_seq: string;
  created_at: string;
  last_at: string;
  head_hash: string;
}

/**
 * The event log's SQL over one schema. Statement text is fixed per query shape and each shape is
 * a named prepared statement, so PostgreSQL parses and plans it once per connection.
 */
export class PostgresEventSql {
  readonly #t: PostgresTables;
  readonly #readShapes = new Map<string, string>();
  /** Inserts one chunk of a batch's events. */
  readonly #insertChunk: string;
  /** Inserts a batch's last chunk, moves the continuity heads and notifies, in one statement. */
  readonly #insertLast: string;

  constructor(tables: PostgresTables) {
    this.#t = tables;
    const t = tables;
    const events = `INSERT INTO ${t.events} (${EVENT_COLUMNS})
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                           $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])`;
    this.#insertChunk = events;
    this.#insertLast = `WITH inserted AS (${events}), heads AS (
        INSERT INTO ${t.continuities} AS c (continuity, events, first_seq, last_seq, created_at, last_at, head_hash)
        SELECT * FROM unnest($13::text[], $14::bigint[], $15::bigint[], $16::bigint[], $17::text[], $18::text[], $19::text[])
        ON CONFLICT (continuity) DO UPDATE SET
          events = c.events + excluded.events,
          last_seq = excluded.last_seq,
          last_at = excluded.last_at,
          head_hash = excluded.head_hash
      )
      SELECT pg_notify($20, $21)`;
  }

  /**
   * Writes `batch` on `client`, which must be inside a transaction the caller commits and opened
   * with `advanceSql(batch.length)`, whose result is `advanced`.
   *
   * The head row is updated first: its row lock makes every other writer (in any process) wait
   * until this transaction ends, so seqs are assigned in commit order and a reader that has seen
   * head `h` can never later find a seq ≤ `h` appearing. A rollback also rolls back the counter,
   * so seqs have no holes. The continuity heads are read only after that lock is held, so they
   * include every earlier commit.
   */
  async write(
    client: pg.ClientBase,
    batch: readonly PreparedEvent[],
    advanced: pg.QueryResult,
    expectFirst?: number,
  ): Promise<SpoolEvent[]> {
    const t = this.#t;
    const lastRow = (advanced.rows as Array<{ last_seq: string }>)[0];
    if (!lastRow)
      throw new StoreError("store.io", "the spool_head row is missing", {
        hint: "Restore the database from a backup",
      });
    const last = Number(lastRow.last_seq);
    const first = last - batch.length + 1;
    // Thrown under the head lock: the transaction rolls back, and with it the counter's move.
    if (expectFirst !== undefined && first !== expectFirst) {
      throw seqMovedError(
        `the batch was to be written at seq ${expectFirst}, but the log's next seq is ${first}: something else was written first`,
      );
    }
    // The heads are read in a statement after the lock's: its snapshot then includes every commit
    // made before the lock was granted. (Reading them in the lock's statement would use a
    // snapshot from before the wait, and link onto stale heads.)
    const ids = [...new Set(batch.map((event) => event.continuity))];
    const current = await client.query<{ continuity: string; head_hash: string }>({
      name: "spool_continuity_heads",
      text: `SELECT continuity, head_hash FROM ${t.continuities} WHERE continuity = ANY($1::text[])`,
      values: [ids],
    });
    const heads = new Map(current.rows.map((row) => [row.continuity, row.head_hash]));
    const linker = new BatchLinker(first, heads);

    // Chunks are pipelined: the server inserts one while the next is linked and hashed here. The
    // last statement also moves the continuity heads and notifies, in the same round trip.
    let inFlight: Promise<unknown> | undefined;
    for (let offset = 0, size = FIRST_CHUNK; offset < batch.length; size *= 2) {
      const end = Math.min(batch.length, offset + Math.min(size, LARGEST_CHUNK));
      const columns = linker.link(batch.slice(offset, end));
      offset = end;
      if (inFlight) await inFlight;
      inFlight =
        end < batch.length
          ? client.query({ name: "spool_insert_chunk", text: this.#insertChunk, values: columns })
          : client.query({
              name: "spool_insert_events",
              text: this.#insertLast,
              values: [...columns, ...linker.continuityColumns(), NOTIFY_CHANNEL, String(last)],
            });
      // Settled here or by the next `await`; never left as an unhandled rejection meanwhile.
      inFlight.catch(() => undefined);
    }
    await inFlight;
    return linker.stored;
  }

  /**
   * The statement that opens a write of `count` events: it takes the head row lock and moves the
   * head past them, returning the new `last_seq`. Plain text (no parameters), so it travels with
   * `BEGIN` in one round trip; `write` gets its result.
   */
  advanceSql(count: number): string {
    if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`bad batch size ${count}`);
    return `UPDATE ${this.#t.head} SET last_seq = last_seq + ${count} WHERE id = 1 RETURNING last_seq`;
  }

  /** The committed head: every seq up to it is committed and visible to any later statement. */
  async head(db: pg.Pool | pg.ClientBase): Promise<number> {
    const result = await db.query<{ last_seq: string }>({
      name: "spool_head",
      text: `SELECT last_seq FROM ${this.#t.head} WHERE id = 1`,
    });
    return Number(result.rows[0]?.last_seq ?? 0);
  }

  /**
   * One page of events with `after < seq ≤ min(until, head)`. The head is read first, in its own
   * statement; because seqs are assigned under the head row lock, nothing at or below it can
   * still be uncommitted, so the page never has a hole that fills in later.
   */
  async readPage(
    pool: pg.Pool,
    query: EventQuery,
    after: number,
    limit: number,
  ): Promise<EventPage> {
    const head = await this.head(pool);
    const until = Math.min(query.until ?? head, head);
    if (limit <= 0 || until <= after) return { events: [], head };
    const values: unknown[] = [after, until];
    let shape = 0;
    if (query.continuity !== undefined) {
      shape |= 1;
      values.push(query.continuity);
    }
    let kind = "";
    if (query.stream !== undefined) {
      shape |= 2;
      kind = checkStreamKind(query.stream.kind);
      values.push(query.stream.id);
    }
    if (query.types !== undefined) {
      shape |= 4;
      values.push(query.types);
    }
    values.push(limit);
    const name = `spool_read_${shape}${kind && `_${kind}`}`;
    const result = await pool.query<EventRow>({
      name,
      text: this.#readSql(name, shape, kind),
      values,
    });
    let chars = 0;
    for (const row of result.rows) chars += row.data.length;
    return { events: result.rows.map(toEvent), head, chars };
  }

  /** Every continuity's head, oldest first. */
  async continuities(pool: pg.Pool): Promise<ContinuityHead[]> {
    const result = await pool.query<ContinuityRow>({
      name: "spool_continuities",
      text: `SELECT * FROM ${this.#t.continuities} ORDER BY first_seq`,
    });
    return result.rows.map(toContinuity);
  }

  /** One continuity's head, or `undefined` when it has no events. */
  async continuity(pool: pg.Pool, id: string): Promise<ContinuityHead | undefined> {
    const result = await pool.query<ContinuityRow>({
      name: "spool_continuity",
      text: `SELECT * FROM ${this.#t.continuities} WHERE continuity = $1`,
      values: [id],
    });
    const row = result.rows[0];
    return row ? toContinuity(row) : undefined;
  }

  /** The SQL of one query shape, built once per statement `name` (which encodes the shape). */
  #readSql(name: string, shape: number, kind: string): string {
    let sql = this.#readShapes.get(name);
    if (sql) return sql;
    const where = ["seq > $1", "seq <= $2"];
    let next = 3;
    if (shape & 1) where.push(`continuity = $${next++}`);
    // The kind is written into the statement so the planner can use the partial stream index;
    // a continuity's own stream has the continuity's id and is served by the continuity index.
    if (shape & 2 && kind === "continuity")
      where.push(`continuity = $${next++}`, "stream_kind = 'continuity'");
    else if (shape & 2) where.push(`stream_kind = '${kind}'`, `stream_id = $${next++}`);
    if (shape & 4) where.push(`type = ANY($${next++}::text[])`);
    sql = `SELECT ${EVENT_COLUMNS} FROM ${this.#t.events} WHERE ${where.join(" AND ")} ORDER BY seq LIMIT $${next}`;
    this.#readShapes.set(name, sql);
    return sql;
  }
}

function toEvent(row: EventRow): SpoolEvent {
  return {
    seq: Number(row.seq),
    id: row.id,
    continuity: row.continuity,
    stream: { kind: row.stream_kind as StreamKind, id: row.stream_id },
    type: row.type,
    ts: row.ts,
    actor: row.actor,
    origin: row.origin,
    criticality: row.criticality as Criticality,
    // Our own column, written from canonical JSON by `write`: not outside input.
    data: JSON.parse(row.data),
    hash: row.hash,
  };
}

function toContinuity(row: ContinuityRow): ContinuityHead {
  return {
    continuity: row.continuity,
    events: Number(row.events),
    firstSeq: Number(row.first_seq),
    lastSeq: Number(row.last_seq),
    createdAt: row.created_at,
    lastAt: row.last_at,
    headHash: row.head_hash,
  };
}
