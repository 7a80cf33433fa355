import type { EventStore } from "../log/index.js";
import type { AnyNewEvent, NewEvent, StreamRef } from "../spec/index.js";
import { isCompared, type LaneMatcher, type ReplayDifference } from "./replay-compare.js";

/** How waiting for a condition ended. */
export interface SettleOutcome {
  difference?: ReplayDifference;
  /** Nothing was appended for the stall time and the condition did not hold. */
  stalled?: boolean;
}

/** The store a replayed runtime writes to: it checks each event against the log first. */
export interface VerifyingStore extends EventStore {
  /**
   * Waits until `condition` holds (checked after every append), `done` settles, a difference is
   * found, or nothing is appended for `stallMs`.
   */
  settle(
    condition: (() => boolean) | undefined,
    stallMs: number,
    done?: Promise<unknown>,
  ): Promise<SettleOutcome>;
  /** Re-enacts a crash: from now on no append of this store ever completes. */
  kill(): void;
  /**
   * The first derived event held back (a crash was ahead) in place of a logged one with a seq
   * below `seq`: the crashed process did write there, so it is a difference after all.
   */
  heldBefore(seq: number): ReplayDifference | undefined;
}

/** Options of `createVerifyingStore`. */
export interface VerifyingStoreOptions {
  /** Where matched events are written. */
  scratch: EventStore;
  matcher: LaneMatcher;
  /**
   * True while the log shows a crash ahead: an event the log lacks may be one the crashed
   * process never got to write, so it is held back (never written) rather than a difference.
   */
  crashAhead(): boolean;
  /**
   * The seq of the next restart in the log (`recovery.started`), if any: a derived event is
   * matched only against a logged one before it (see `LaneMatcher.offer`).
   */
  restartAt?(): number | undefined;
  /**
   * Called for each event an append matched: a promise it returns holds back the append's answer
   * until it settles. Replay holds the append of the event just before a cancel's first
   * consequence on the same stream, so the cancel lands where the original's did: while the
   * runtime waited for that append.
   */
  holdAfter?(event: DerivedEvent): Promise<void> | undefined;
}

/** An event as a replayed runtime derived it (what the matcher compares). */
export interface DerivedEvent {
  type: string;
  stream: StreamRef;
  data: unknown;
}

const NEVER = new Promise<never>(() => {});

/**
 * An `EventStore` over a scratch store that matches every compared event a replayed runtime
 * appends against the logged one before writing it. A difference freezes the store (appends
 * never complete, so the replayed run stops where it went another way) and is reported to
 * whoever waits in `settle`.
 */
export function createVerifyingStore(options: VerifyingStoreOptions): VerifyingStore {
  const { scratch, matcher } = options;
  let killed = false;
  let difference: ReplayDifference | undefined;
  const held: ReplayDifference[] = [];
  let wake: (() => void) | undefined;
  const poke = () => wake?.();

  const check = (event: AnyNewEvent | NewEvent): boolean => {
    if (killed || difference) return false;
    const derived = derivedOf(event);
    if (!isCompared(derived)) return true;
    const found = matcher.offer(derived, options.restartAt?.());
    if (!found) return true;
    if (options.crashAhead()) {
      // With a crash ahead this may be an event the crashed process never got to write: held
      // back, it becomes a difference if the log has the lane's expected event before the crash.
      if (found.expected !== undefined) held.push(found);
      return false;
    }
    difference = found;
    return false;
  };

  /** `written`, answered only once every hold `holdAfter` puts on `events` has settled. */
  const answered = <T>(
    written: Promise<T>,
    events: readonly (AnyNewEvent | NewEvent)[],
  ): Promise<T> => {
    const holds: Promise<void>[] = [];
    for (const event of events) {
      const hold = options.holdAfter?.(derivedOf(event));
      if (hold !== undefined) holds.push(hold);
    }
    return holds.length === 0
      ? written
      : written.then((stored) => Promise.all(holds).then(() => stored));
  };

  const store: VerifyingStore = {
    kind: scratch.kind,
    location: scratch.location,
    holdsAnswers: true,
    artifacts: scratch.artifacts,
    append(event) {
      const ok = check(event);
      poke();
      if (!ok) return NEVER;
      return answered(scratch.append(event).finally(poke), [event]);
    },
    appendBatch(events, options) {
      for (const event of events) {
        if (!check(event)) {
          poke();
          return NEVER;
        }
      }
      poke();
      return answered(scratch.appendBatch(events, options).finally(poke), events);
    },
    flush: () => (killed ? NEVER : scratch.flush()),
    read: (query) => scratch.read(query),
    readRecent: (continuity, after) => scratch.readRecent?.(continuity, after),
    fold: (query, projection) => scratch.fold(query, projection),
    subscribe: (subscribeOptions) => scratch.subscribe(subscribeOptions),
    head: () => scratch.head(),
    continuities: () => scratch.continuities(),
    continuity: (id) => scratch.continuity(id),
    acquireLease: (continuity, holder, ttlMs) => scratch.acquireLease(continuity, holder, ttlMs),
    renewLease: (continuity, token, ttlMs) => scratch.renewLease(continuity, token, ttlMs),
    releaseLease: (continuity, token) => scratch.releaseLease(continuity, token),
    lease: (continuity) => scratch.lease(continuity),
    close: async () => {},
    kill() {
      killed = true;
    },
    heldBefore: (seq) => held.find((found) => found.expected!.seq < seq),
    settle(condition, stallMs, done) {
      return new Promise<SettleOutcome>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const finish = (outcome: SettleOutcome) => {
          clearTimeout(timer);
          wake = undefined;
          resolve(outcome);
        };
        const test = () => {
          if (difference) return finish({ difference });
          if (condition?.()) return finish({});
          clearTimeout(timer);
          timer = setTimeout(
            () => finish(difference ? { difference } : { stalled: true }),
            stallMs,
          );
        };
        wake = test;
        done?.then(
          () => finish(difference ? { difference } : {}),
          () => finish(difference ? { difference } : {}),
        );
        test();
      });
    },
  };
  return store;
}

function derivedOf(event: AnyNewEvent | NewEvent): DerivedEvent {
  return {
    type: event.type,
    stream: event.stream ?? ({ kind: "continuity", id: event.continuity } as StreamRef),
    data: event.data,
  };
}
