import type { EventStore } from "../log/index.js";
import type { SpoolEvent } from "../spec/index.js";
import { StoreError } from "../spec/index.js";
import { ContinuityLease, type LeaseOptions } from "./continuity-lease.js";

/** Options of `ContinuityOwners`. */
export interface ContinuityOwnersOptions {
  store: EventStore;
  lease: LeaseOptions;
  /** A turn another process appended (queued for this owner) while this runtime owns the continuity. */
  onTurn: (continuity: string, turn: string, event: SpoolEvent) => void;
  /** The lease of `continuity` was taken over: stop running it. */
  onLost: (continuity: string) => void;
}

interface Owned {
  lease: ContinuityLease;
  follow: AbortController;
  following: Promise<void>;
}

/**
 * The continuities a runtime owns: for each, its lease (`ContinuityLease`) and a follower of the
 * turns other processes append to it, which `onTurn` hands to the runtime to run.
 *
 * Guarantees: `own` resolves once the lease is held (at most one acquisition per continuity, however
 * many callers wait), or rejects with `ContinuityLiveError` (another process holds it) or
 * `store.lease-lost` (it was held here and taken over). Every `turn.added` committed after the
 * lease was taken and not appended by this runtime (`markOwn`) reaches `onTurn` exactly once, in
 * log order. Turns appended before are the runtime's to find in the log (`resume`). `close` stops
 * following and releases every lease; it never throws.
 */
export class ContinuityOwners {
  readonly #options: ContinuityOwnersOptions;
  readonly #owned = new Map<string, Promise<Owned>>();
  /** Turns this runtime appends itself: the follower skips them. */
  readonly #own = new Set<string>();

  constructor(options: ContinuityOwnersOptions) {
    this.#options = options;
  }

  /** Takes the continuity's lease and starts following its turns, once; see the class. */
  async own(continuity: string): Promise<void> {
    let owned = this.#owned.get(continuity);
    if (!owned) {
      owned = this.#take(continuity);
      this.#owned.set(continuity, owned);
      // A refused lease is asked for again next time (its holder may have ended by then).
      owned.catch(() => this.#owned.delete(continuity));
    }
    const { lease } = await owned;
    if (lease.lost) {
      throw new StoreError(
        "store.lease-lost",
        `this process no longer owns continuity ${continuity}: another process took it over`,
        { hint: "Follow it (spool tail) or queue a turn for it (spool chat)" },
      );
    }
  }

  /** Marks `turn` as appended by this runtime, before its append: the follower leaves it alone. */
  markOwn(turn: string): void {
    this.#own.add(turn);
  }

  /** Stops following and releases the leases. */
  async close(): Promise<void> {
    const owned = await Promise.allSettled([...this.#owned.values()]);
    this.#owned.clear();
    for (const result of owned) if (result.status === "fulfilled") result.value.follow.abort();
    await Promise.all(
      owned.map(async (result) => {
        if (result.status !== "fulfilled") return;
        await result.value.following;
        await result.value.lease.release();
      }),
    );
  }

  async #take(continuity: string): Promise<Owned> {
    const { store } = this.#options;
    // Read before the lease is taken: a turn queued in between is followed, not missed.
    const after = await store.head();
    const lease = await ContinuityLease.take(store, continuity, this.#options.lease);
    lease.onLost(() => this.#options.onLost(continuity));
    const follow = new AbortController();
    const following = this.#follow(continuity, after, follow.signal);
    return { lease, follow, following };
  }

  async #follow(continuity: string, after: number, signal: AbortSignal): Promise<void> {
    try {
      for await (const message of this.#options.store.subscribe({
        continuity,
        types: ["turn.added"],
        after,
        signal,
      })) {
        if (message.type !== "event" || message.event.stream.kind !== "continuity") continue;
        const { id } = message.event;
        if (this.#own.delete(id)) continue;
        this.#options.onTurn(continuity, id, message.event);
      }
    } catch {
      // The store failed or closed under the follower: turns it did not hand over stay waiting
      // in the log, where the next `resume` of the continuity finds and runs them.
    }
  }
}
