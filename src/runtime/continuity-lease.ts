import { hostname } from "node:os";
import type { EventStore, LeaseHeld, LeaseLost } from "../log/index.js";
import { SpoolError } from "../spec/index.js";

/** How a runtime holds the leases of the continuities it runs. */
export interface LeaseOptions {
  /** Who holds them, as other processes are told (default `pid <pid> on <host>`). */
  holder?: string;
  /** How long a lease lives unless renewed (default 15 s): how soon another process may recover after a crash. */
  ttlMs?: number;
  /** How often it is renewed (default a third of `ttlMs`). */
  renewEveryMs?: number;
  /** The renewal timer (tests inject one to renew on demand); default `setInterval`, unref'd. */
  timer?: (tick: () => void, everyMs: number) => { stop(): void };
}

/** Default time to live of a continuity lease. */
export const DEFAULT_LEASE_TTL_MS = 15_000;

/** The default holder name: this process, by pid and host. */
export function defaultLeaseHolder(): string {
  return `pid ${process.pid} on ${hostname()}`;
}

/**
 * Another process runs the continuity: its lease is live. Code `runtime.continuity-live`; the
 * message names the holder and says what to do instead (queue a turn, follow, or wait for it to end).
 */
export class ContinuityLiveError extends SpoolError {
  readonly continuity: string;
  readonly holder: string;
  readonly expiresAt: number;

  constructor(held: LeaseHeld) {
    super(
      "runtime.continuity-live",
      `continuity ${held.continuity} is running in another process (${held.holder})`,
      {
        hint: "Queue a turn for it (spool chat, spool run --continuity) or follow it (spool tail); it can be resumed here only once that process ends or its lease lapses",
        details: { continuity: held.continuity, holder: held.holder, expiresAt: held.expiresAt },
      },
    );
    this.continuity = held.continuity;
    this.holder = held.holder;
    this.expiresAt = held.expiresAt;
  }
}

/**
 * This process's ownership of one continuity: its lease, renewed on a timer while held.
 *
 * Guarantees: `take` returns only with the lease granted (the store then fences this store's
 * appends to the continuity with its token), or throws `ContinuityLiveError` when another holder's
 * lease is live. While held, the lease is renewed every `renewEveryMs`; a renewal that finds the
 * token lost calls `onLost` once (the appends are refused by the store from then on anyway). A
 * renewal that fails for another reason (the store is briefly unreachable) is retried at the next
 * tick. `release` stops renewing and frees the lease; it never throws.
 */
export class ContinuityLease {
  readonly continuity: string;
  readonly holder: string;
  readonly token: number;
  readonly #store: EventStore;
  readonly #ttlMs: number;
  readonly #timer: { stop(): void };
  #lost: LeaseLost | undefined;
  #released: Promise<void> | undefined;
  #renewing: Promise<void> | undefined;
  #onLost: ((lost: LeaseLost) => void) | undefined;

  private constructor(
    store: EventStore,
    continuity: string,
    holder: string,
    token: number,
    options: LeaseOptions,
  ) {
    this.#store = store;
    this.continuity = continuity;
    this.holder = holder;
    this.token = token;
    this.#ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    const every = options.renewEveryMs ?? Math.max(1, Math.floor(this.#ttlMs / 3));
    this.#timer = (options.timer ?? intervalTimer)(() => this.#renew(), every);
  }

  /** Takes the lease of `continuity`, or throws `ContinuityLiveError` naming who holds it. */
  static async take(
    store: EventStore,
    continuity: string,
    options: LeaseOptions = {},
  ): Promise<ContinuityLease> {
    const holder = options.holder ?? defaultLeaseHolder();
    const answer = await store.acquireLease(
      continuity,
      holder,
      options.ttlMs ?? DEFAULT_LEASE_TTL_MS,
    );
    if (answer.status === "held") throw new ContinuityLiveError(answer);
    return new ContinuityLease(store, continuity, holder, answer.token, options);
  }

  /** Whether the lease was found taken over (then nothing this process appends to it is stored). */
  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /** Calls `listener` once if a renewal finds the lease taken over. */
  onLost(listener: (lost: LeaseLost) => void): void {
    this.#onLost = listener;
    if (this.#lost) listener(this.#lost);
  }

  /** Renews now (the timer does this on its own); resolves when the renewal is answered. */
  renew(): Promise<void> {
    this.#renew();
    return this.#renewing ?? Promise.resolve();
  }

  /** Stops renewing and releases the lease (pending appends are written first). Never throws. */
  release(): Promise<void> {
    this.#released ??= (async () => {
      this.#timer.stop();
      await this.#renewing;
      if (this.#lost) return;
      await this.#store.releaseLease(this.continuity, this.token).catch(() => undefined);
    })();
    return this.#released;
  }

  #renew(): void {
    if (this.#renewing || this.#released || this.#lost) return;
    this.#renewing = this.#store
      .renewLease(this.continuity, this.token, this.#ttlMs)
      .then(
        (answer) => {
          if (answer.status === "lost") {
            this.#lost = answer;
            this.#timer.stop();
            this.#onLost?.(answer);
          }
        },
        () => {
          // Retried at the next tick; should it lapse meanwhile, fencing keeps the log whole.
        },
      )
      .finally(() => {
        this.#renewing = undefined;
      });
  }
}

function intervalTimer(tick: () => void, everyMs: number): { stop(): void } {
  const handle = setInterval(tick, everyMs);
  // A lease alone does not keep a finished process running.
  handle.unref();
  return { stop: () => clearInterval(handle) };
}
