import {
  chainHash,
  GENESIS_HASH,
  type PreparedEvent,
  type SpoolEvent,
  storedEvent,
} from "../../spec/index.js";
import { pendingEvent } from "../log-backend.js";
import { rememberStoredData } from "../stored-data.js";

/** What PostgreSQL's array input syntax escapes inside a double-quoted element. */
const QUOTED_SPECIAL = /["\\]/g;

/**
 * A PostgreSQL array literal of `values` (`{"a","b",NULL}`), as pg would send the array, built
 * here while the server still inserts the chunk before rather than by pg as it sends this one,
 * and without pg's two passes and four strings per element. `plain` columns hold only Spool
 * identifiers, names, ULIDs, ISO times and hex, which validation keeps free of `"` and `\`, so
 * their elements need no escaping (a test holds both forms equal to pg's own).
 */
export function arrayLiteral(values: readonly (string | null)[], plain: boolean): string {
  if (plain && !values.includes(null))
    return values.length === 0 ? "{}" : `{"${values.join('","')}"}`;
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (i > 0) out += ",";
    if (value === null || value === undefined) out += "NULL";
    else out += `"${plain ? value : value.replace(QUOTED_SPECIAL, "\\$&")}"`;
  }
  return `${out}}`;
}

/** Which `spool_events` columns may hold `"` or `\` (origin and data) and need escaping. */
const ESCAPED_COLUMNS = new Set([8, 10]);

/** A continuity's change within one batch. */
interface Touched {
  events: number;
  firstSeq: number;
  createdAt: string;
  /** The continuity's newest event in the batch so far: its new head. */
  last: SpoolEvent;
}

/**
 * Positions a batch at its seqs and links each event into its continuity's chain, a chunk at a
 * time, so the caller can send one chunk to the server while it links the next.
 *
 * Each continuity's first event links onto `heads` (the committed head hash per continuity), the
 * rest onto the event before them in the batch. Pure; `write` runs it under the head row lock, so
 * `heads` cannot change underneath it.
 */
export class BatchLinker {
  /** The events as `write` returns them, in batch order. */
  readonly stored: SpoolEvent[] = [];
  readonly #chain: Map<string, string>;
  readonly #touched = new Map<string, Touched>();
  #next: number;

  /** `first` is the seq of the batch's first event. */
  constructor(first: number, heads: ReadonlyMap<string, string>) {
    this.#next = first;
    this.#chain = new Map(heads);
  }

  /**
   * Links the next `chunk` of the batch; returns the `spool_events` columns for `unnest`, each an
   * array already in its text form.
   */
  link(chunk: readonly PreparedEvent[]): unknown[] {
    const columns: unknown[][] = Array.from({ length: 12 }, () => new Array(chunk.length));
    for (let index = 0; index < chunk.length; index++) {
      const { event, dataJson, canonical } = pendingEvent(chunk[index]!);
      const seq = this.#next++;
      const hash = chainHash(this.#chain.get(event.continuity) ?? GENESIS_HASH, canonical);
      this.#chain.set(event.continuity, hash);
      const stored = storedEvent(event, seq, hash);
      // What the tail reads back and measures: the data as this batch writes it.
      rememberStoredData(stored, dataJson);
      this.stored.push(stored);
      columns[0]![index] = seq;
      columns[1]![index] = event.id;
      columns[2]![index] = event.continuity;
      columns[3]![index] = event.stream.kind;
      columns[4]![index] = event.stream.id;
      columns[5]![index] = event.type;
      columns[6]![index] = event.ts;
      columns[7]![index] = event.actor;
      columns[8]![index] = event.origin;
      columns[9]![index] = event.criticality;
      columns[10]![index] = dataJson;
      columns[11]![index] = hash;
      const seen = this.#touched.get(event.continuity);
      if (seen) {
        seen.events += 1;
        seen.last = stored;
      } else {
        this.#touched.set(event.continuity, {
          events: 1,
          firstSeq: seq,
          createdAt: event.ts,
          last: stored,
        });
      }
    }
    return columns.map((column, index) =>
      index === 0
        ? `{${column.join(",")}}`
        : arrayLiteral(column as (string | null)[], !ESCAPED_COLUMNS.has(index)),
    );
  }

  /** One array per `spool_continuities` column: each touched continuity's change so far. */
  continuityColumns(): unknown[][] {
    const columns: unknown[][] = Array.from({ length: 7 }, () => []);
    for (const [continuity, { events, firstSeq, createdAt, last }] of this.#touched) {
      const row = [continuity, events, firstSeq, last.seq, createdAt, last.ts, last.hash];
      for (let column = 0; column < 7; column++) columns[column]!.push(row[column]);
    }
    return columns;
  }
}
