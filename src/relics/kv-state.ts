import type { EventStore } from "../log/index.js";
import type { SpoolEvent } from "../spec/index.js";

/** The event types the kv state is folded from. */
export const KV_EVENT_TYPES = ["kv.set", "kv.deleted"] as const;

/** One key's current value; `version` is the `seq` of the `kv.set` that wrote it. */
export interface KvEntry {
  value: unknown;
  version: number;
}

/** A page of `KvState.list`. */
export interface KvPage {
  entries: Array<{ key: string; entry: KvEntry }>;
  /** Pass as `after` for the next page; absent on the last page. */
  nextAfter?: string;
}

/**
 * The state of one kv relic: a fold over its `kv.set` and `kv.deleted` events.
 *
 * Contract: `apply` is O(1) and idempotent per seq (an event at or below the last applied seq is
 * ignored), so loading once and then applying each write keeps the state equal to a full fold.
 * Events of other relics are ignored.
 */
export class KvState {
  readonly relic: string;
  readonly #entries = new Map<string, KvEntry>();
  #lastSeq = 0;

  constructor(relic: string) {
    this.relic = relic;
  }

  /** Builds the state from the log: one read of the continuity's kv events. */
  static async load(store: EventStore, continuity: string, relic: string): Promise<KvState> {
    const state = new KvState(relic);
    for await (const event of store.read({ continuity, types: KV_EVENT_TYPES })) state.apply(event);
    return state;
  }

  /** The seq of the newest event applied (0 before any). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Folds one event in. */
  apply(event: SpoolEvent): void {
    if (event.seq <= this.#lastSeq) return;
    const data = event.data as { relic?: unknown; key?: unknown; value?: unknown };
    if (data.relic !== this.relic || typeof data.key !== "string") return;
    this.#lastSeq = event.seq;
    if (event.type === "kv.set")
      this.#entries.set(data.key, { value: data.value, version: event.seq });
    else if (event.type === "kv.deleted") this.#entries.delete(data.key);
  }

  get(key: string): KvEntry | undefined {
    return this.#entries.get(key);
  }

  /** Keys starting with `prefix` and sorting after `after`, in code-unit order, at most `limit`. */
  list(prefix: string, after: string | undefined, limit: number): KvPage {
    const keys: string[] = [];
    for (const key of this.#entries.keys()) {
      if (key.startsWith(prefix) && (after === undefined || key > after)) keys.push(key);
    }
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const page = keys.slice(0, limit);
    const entries = page.map((key) => ({ key, entry: this.#entries.get(key)! }));
    return keys.length > limit ? { entries, nextAfter: page.at(-1)! } : { entries };
  }
}
