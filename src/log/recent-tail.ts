import type { SpoolEvent } from "../spec/index.js";
import type { ReadQuery } from "./event-store.js";
import { storedDataLength, storedJson, withStoredData } from "./stored-data.js";

/** Most events the tail holds before it starts over (it is a cache, not a copy of the log). */
const MAX_EVENTS = 4096;
/**
 * Most characters of stored data the tail holds before it starts over: a flood of large events
 * (a source's chunks of 64 KiB lines) would otherwise keep 4,096 of them, and their parsed
 * copies, in memory.
 */
const MAX_CHARS = 4 * 1024 * 1024;

/**
 * The events a store wrote itself, recently, by continuity: a read of what a continuity gained
 * since a recent seq (a thread catching up before each step) is answered from memory instead of
 * the database.
 *
 * The tail knows every event with a seq in `(from, known]`: each write it is told of must start
 * right after `known`, or something else (another process, another connection) committed between
 * and the tail starts over after it. A read is answered here only when it starts at or after
 * `from` and the store's head is still `known` (nothing was committed since, by anyone).
 * An event is answered as a read of the database would give it: its data as stored (canonical
 * JSON, parsed), made once, when first read.
 */
export class RecentTail {
  #from = -1;
  #known = -1;
  #size = 0;
  #chars = 0;
  #byContinuity = new Map<string, SpoolEvent[]>();
  /** Events already made as stored (their data parsed from its canonical JSON). */
  #asStored = new WeakSet<SpoolEvent>();

  /** Takes in the events of one committed write, in seq order. */
  stored(events: readonly SpoolEvent[]): void {
    const first = events[0];
    if (!first) return;
    const chars = events.reduce((sum, event) => sum + (storedDataLength(event) ?? 0), 0);
    if (
      first.seq !== this.#known + 1 ||
      this.#size + events.length > MAX_EVENTS ||
      this.#chars + chars > MAX_CHARS
    ) {
      this.#startOver(first.seq - 1);
    }
    for (const event of events) {
      const list = this.#byContinuity.get(event.continuity);
      if (list) list.push(event);
      else this.#byContinuity.set(event.continuity, [event]);
    }
    this.#size += events.length;
    this.#chars += chars;
    this.#known = events.at(-1)!.seq;
  }

  /** The last seq the tail knows: each write it was told of ended at or before it. */
  get known(): number {
    return this.#known;
  }

  /**
   * The events of `continuity` after `after` up to `known`, when the tail holds all of them;
   * `undefined` when `after` is before what it knows.
   */
  since(continuity: string, after: number): readonly SpoolEvent[] | undefined {
    return this.answer({ continuity, after }, this.#known);
  }

  /** True for the reads the tail may answer: one continuity's whole stream. */
  static mayAnswer(query: ReadQuery): boolean {
    return query.continuity !== undefined && !query.stream && !query.types;
  }

  /**
   * The events `query` reads, when the tail can answer it while the store's head is `head`;
   * `undefined` when the database must. Only reads of one continuity's whole stream (with `after`,
   * `until` and `limit`) are answered here.
   */
  answer(query: ReadQuery, head: number): readonly SpoolEvent[] | undefined {
    const { continuity } = query;
    if (continuity === undefined || !RecentTail.mayAnswer(query)) return undefined;
    const after = query.after ?? 0;
    if (head !== this.#known || after < this.#from) return undefined;
    const list = this.#byContinuity.get(continuity);
    if (!list) return [];
    const until = query.until ?? head;
    const limit = query.limit ?? Number.POSITIVE_INFINITY;
    let start = list.length;
    while (start > 0 && list[start - 1]!.seq > after) start -= 1;
    const out: SpoolEvent[] = [];
    for (let i = start; i < list.length && out.length < limit; i++) {
      let event = list[i]!;
      if (event.seq > until) break;
      if (!this.#asStored.has(event)) {
        const written = event;
        event = withStoredData(written, () => storedJson(written));
        this.#asStored.add(event);
        list[i] = event;
      }
      out.push(event);
    }
    return out;
  }

  /** Forgets everything: the tail then knows the (empty) range after `seq`. */
  #startOver(seq: number): void {
    this.#byContinuity.clear();
    this.#size = 0;
    this.#chars = 0;
    this.#from = seq;
    this.#known = seq;
  }

  /** Forgets everything (the store closed). */
  clear(): void {
    this.#startOver(-1);
  }
}
