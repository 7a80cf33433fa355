/**
 * `watchLease`: a follower learns that a continuity's owner is gone from one timer set to the
 * lease's expiry, moved when the owner renews, not from polling; and that it closed from its
 * `runtime.closed`, after which it reads the lease again at once. The store and the timers are
 * fakes the test steps by hand; it waits for the watch's own calls, never for time.
 */
import { describe, expect, it } from "vitest";
import {
  LEASE_RETRY_MS,
  type LeaseReading,
  MIN_LEASE_WAIT_MS,
  watchLease,
} from "../src/cli/commands/lease-watch.js";
import type { EventStore, SubscribeOptions, SubscriptionMessage } from "../src/log/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { manualTimeouts } from "./support/manual-timeouts.js";

const NOW = 1_000_000;

function live(expiresAt: number): NonNullable<LeaseReading> {
  return { continuity: "c", holder: "pid 1 on host", token: 1, expiresAt, live: true };
}

/**
 * A store whose `lease` answers are given by the test, one per reading, and whose subscription
 * delivers the `runtime.closed` events the test logs with `close()`.
 */
function fakeStore(head = 0) {
  const answers: ((reading: LeaseReading | Error) => void)[] = [];
  /** The seq after which each subscription of the watch began. */
  const follows: (number | undefined)[] = [];
  let asked: (() => void) | undefined;
  let deliver: ((message: SubscriptionMessage) => void) | undefined;
  let following: () => void = () => {};
  const followed = new Promise<void>((resolve) => {
    following = resolve;
  });
  const store = {
    lease: () =>
      new Promise<LeaseReading>((resolve, reject) => {
        answers.push((reading) => (reading instanceof Error ? reject(reading) : resolve(reading)));
        asked?.();
      }),
    head: async () => head,
    subscribe: (options: SubscribeOptions) => ({
      async *[Symbol.asyncIterator]() {
        follows.push(options.after);
        expect(options).toMatchObject({ continuity: "c", types: ["runtime.closed"] });
        while (!options.signal?.aborted) {
          yield await new Promise<SubscriptionMessage>((resolve) => {
            deliver = resolve;
            following();
          });
        }
      },
    }),
  } as unknown as EventStore;
  return {
    store,
    /** Logs a `runtime.closed` once the watch follows the continuity. */
    async close() {
      await followed;
      deliver!({ type: "event", event: { type: "runtime.closed" } as SpoolEvent });
    },
    /** Resolves once the watch has read the lease `n` times in all. */
    read: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (answers.length >= n) resolve();
          else asked = check;
        };
        check();
      }),
    /** Answers the latest reading. */
    answer: (reading: LeaseReading | Error) => answers.at(-1)!(reading),
    follows,
    get reads() {
      return answers.length;
    },
  };
}

describe("watchLease", () => {
  it("sets one timer to the expiry, moves it when the lease is renewed, and reports a lapse once", async () => {
    const store = fakeStore();
    const clock = manualTimeouts();
    let now = NOW;
    const freed: LeaseReading[] = [];
    let onFree!: () => void;
    const free = new Promise<void>((resolve) => {
      onFree = resolve;
    });
    const watch = watchLease(store.store, "c", {
      onFree: (lease) => {
        freed.push(lease);
        onFree();
      },
      now: () => now,
      timers: clock.timers,
    });

    await store.read(1);
    store.answer(live(NOW + 2_000));
    expect(await clock.armed()).toBe(2_001);
    expect(clock.count).toBe(1);

    now = NOW + 2_001;
    clock.fire();
    await store.read(2);
    store.answer(live(NOW + 3_500)); // renewed meanwhile
    expect(await clock.armed()).toBe(1_500);

    now = NOW + 3_501;
    clock.fire();
    await store.read(3);
    const lapsed = { ...live(NOW + 3_500), live: false };
    store.answer(lapsed);
    await free;
    expect(freed).toEqual([lapsed]);
    expect(clock.count).toBe(0);
    expect(store.reads).toBe(3);
    watch.stop();
  });

  it("reads the lease at once when its holder logs its close, then soon, until the release shows", async () => {
    const store = fakeStore();
    const clock = manualTimeouts();
    const freed: LeaseReading[] = [];
    let onFree!: () => void;
    const free = new Promise<void>((resolve) => {
      onFree = resolve;
    });
    watchLease(store.store, "c", {
      onFree: (lease) => {
        freed.push(lease);
        onFree();
      },
      now: () => NOW,
      timers: clock.timers,
    });
    await store.read(1);
    store.answer(live(NOW + 600_000));
    expect(await clock.armed()).toBe(600_001);

    // The holder closed: the expiry timer gives way to a reading now.
    await store.close();
    await store.read(2);
    expect(clock.count).toBe(0);
    store.answer(live(NOW + 600_000)); // still releasing: it finishes its background work first
    expect(await clock.armed()).toBe(MIN_LEASE_WAIT_MS);
    clock.fire();
    await store.read(3);
    store.answer(live(NOW + 600_000));
    expect(await clock.armed()).toBe(2 * MIN_LEASE_WAIT_MS);
    clock.fire();
    await store.read(4);
    const released = { ...live(NOW + 600_000), holder: undefined, live: false };
    store.answer(released);
    await free;
    expect(freed).toEqual([released]);
    expect(clock.count).toBe(0);
  });

  it("follows closes from the seq its caller read before the lease, else from the head", async () => {
    // The caller read seq 4, then found the lease live; the holder closed at 7, before the
    // watch began (the head is 9 by then): that close is delivered, and the release seen at once.
    const store = fakeStore(9);
    const clock = manualTimeouts();
    const freed = new Promise<LeaseReading>((onFree) => {
      watchLease(store.store, "c", { after: 4, onFree, now: () => NOW, timers: clock.timers });
    });
    await store.read(1);
    store.answer(live(NOW + 600_000));
    await store.close();
    await store.read(2);
    store.answer(undefined);
    expect(await freed).toBeUndefined();
    expect(store.follows).toEqual([4]);

    const unread = fakeStore(9);
    watchLease(unread.store, "c", { onFree: () => {}, now: () => NOW, timers: clock.timers });
    await unread.read(1);
    unread.answer(live(NOW + 600_000));
    await unread.close();
    expect(unread.follows).toEqual([9]);
  });

  it("goes back to the expiry when another holder took the lease after a close", async () => {
    const store = fakeStore();
    const clock = manualTimeouts();
    watchLease(store.store, "c", { onFree: () => {}, now: () => NOW, timers: clock.timers });
    await store.read(1);
    store.answer(live(NOW + 600_000));
    await clock.armed();
    await store.close();
    await store.read(2);
    store.answer(live(NOW + 600_000));
    expect(await clock.armed()).toBe(MIN_LEASE_WAIT_MS);
    clock.fire();
    await store.read(3);
    store.answer({ ...live(NOW + 900_000), holder: "pid 2 on host", token: 2 });
    expect(await clock.armed()).toBe(900_001);
  });

  it("reports a released or never-taken lease at the first reading", async () => {
    const store = fakeStore();
    const clock = manualTimeouts();
    const freed = new Promise<LeaseReading>((onFree) => {
      watchLease(store.store, "c", { onFree, timers: clock.timers });
    });
    await store.read(1);
    store.answer(undefined);
    expect(await freed).toBeUndefined();
    expect(clock.count).toBe(0);
  });

  it("waits at least the minimum when its clock runs behind the store's, and retries a failed reading", async () => {
    const store = fakeStore();
    const clock = manualTimeouts();
    watchLease(store.store, "c", { onFree: () => {}, now: () => NOW, timers: clock.timers });
    await store.read(1);
    store.answer(live(NOW - 500)); // live by the store's clock, past by this one
    expect(await clock.armed()).toBe(MIN_LEASE_WAIT_MS);
    clock.fire();
    await store.read(2);
    store.answer(new Error("the store is briefly unreachable"));
    expect(await clock.armed()).toBe(LEASE_RETRY_MS);
  });

  it("calls nothing after stop, and leaves no timer", async () => {
    const store = fakeStore();
    const clock = manualTimeouts();
    const freed: LeaseReading[] = [];
    const watch = watchLease(store.store, "c", {
      onFree: (lease) => freed.push(lease),
      timers: clock.timers,
    });
    await store.read(1);
    store.answer(live(Date.now() + 10_000));
    await clock.armed();
    watch.stop();
    expect(clock.count).toBe(0);

    const stopped = fakeStore();
    const early = watchLease(stopped.store, "c", { onFree: (lease) => freed.push(lease) });
    await stopped.read(1);
    early.stop();
    stopped.answer(undefined);
    // The watch's reaction to the answer was queued first, so it has run once this one resumes.
    await Promise.resolve();
    expect(freed).toEqual([]);
  });
});
