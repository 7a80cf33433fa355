import type { ActionCall, ActionExecutor } from "../../src/actions/executor.js";
import type { FeedClock, FeedEventLike, FeedLog, FeedTimers } from "../../src/feeds/index.js";
import { prepareEvent } from "../../src/spec/index.js";

/** 2024-06-15T12:34:56.000Z, the seed's example time. */
export const SEED_TIME = Date.parse("2024-06-15T12:34:56Z");

interface FakeTimer {
  at: number;
  every?: number;
  callback: () => void;
}

/** Lets pending promise callbacks run (a few event-loop turns; no time passes). */
export async function settle(turns = 10): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock and timers that move only when told: `advance(ms)` fires every timer due on the way,
 * in time order, letting promises settle after each. Nothing sleeps.
 */
export function fakeTime(start = SEED_TIME) {
  let now = start;
  let nextId = 1;
  const pending = new Map<number, FakeTimer>();
  const clock: FeedClock = { now: () => now };
  const timers: FeedTimers = {
    setInterval(callback, ms) {
      const id = nextId++;
      pending.set(id, { at: now + ms, every: ms, callback });
      return id;
    },
    clearInterval(handle) {
      pending.delete(handle as number);
    },
    setTimeout(callback, ms) {
      const id = nextId++;
      pending.set(id, { at: now + ms, callback });
      return id;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
  };
  async function advance(ms: number): Promise<void> {
    const end = now + ms;
    await settle();
    for (;;) {
      let due: [number, FakeTimer] | undefined;
      for (const entry of pending) {
        if (entry[1].at > end) continue;
        if (!due || entry[1].at < due[1].at) due = entry;
      }
      if (!due) break;
      const [id, timer] = due;
      now = timer.at;
      if (timer.every !== undefined) timer.at += timer.every;
      else pending.delete(id);
      timer.callback();
      await settle();
    }
    now = end;
    await settle();
  }
  return {
    clock,
    timers,
    advance,
    /** Timers not yet fired or cleared. */
    count: () => pending.size,
    /** Intervals (in ms) of the timers that repeat. */
    intervals: () => [...pending.values()].flatMap((timer) => (timer.every ? [timer.every] : [])),
  };
}

/** Recorded feed events, each validated against the event catalog as a store would. */
export function memoryFeedLog(clock: FeedClock) {
  const events: (FeedEventLike & { data: Record<string, unknown> })[] = [];
  const log: FeedLog = {
    async record(type, data) {
      prepareEvent(
        { continuity: "c1", type, data },
        {
          now: () => new Date(clock.now()).toISOString(),
          newId: () => "01J00000000000000000000000",
        },
      );
      events.push({
        type,
        data: structuredClone(data) as Record<string, unknown>,
        ts: new Date(clock.now()).toISOString(),
      });
    },
  };
  return {
    log,
    events,
    types: () => events.map((event) => event.type),
    of: (type: string) => events.filter((event) => event.type === type).map((event) => event.data),
  };
}

/** An executor of `type` that records its calls and answers with `run`. */
export function fakeExecutor(
  type: ActionExecutor["type"],
  run: (call: ActionCall) => unknown,
  canRun?: (name: string) => boolean,
) {
  const calls: ActionCall[] = [];
  const executor: ActionExecutor & { calls: ActionCall[] } = {
    type,
    calls,
    ...(canRun ? { canRun } : {}),
    async execute(call) {
      calls.push(call);
      return run(call);
    },
  };
  return executor;
}

/** A promise with its resolve and reject exposed. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}
