import type { EventStore } from "../../log/index.js";
import type { SpoolEvent } from "../../spec/index.js";
import { UsageError } from "../context.js";

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The longest `--for`: a year. */
const MAX_DURATION_MS = 365 * UNITS.d!;

/**
 * `--for`'s value in milliseconds: a positive number and a unit, `s`, `m`, `h` or `d` (`30s`,
 * `5m`, `1.5h`, `1d`), at most a year. Anything else is a `UsageError` of `command` saying what
 * is accepted.
 */
export function parseDuration(command: string, value: string): number {
  const match = /^(\d+(?:\.\d+)?)([smhd])$/.exec(value.trim());
  const ms = match ? Number(match[1]) * UNITS[match[2]!]! : Number.NaN;
  if (!(ms >= 1_000) || ms > MAX_DURATION_MS) {
    throw new UsageError(
      command,
      `--for ${JSON.stringify(value)} is not a duration: write a number and a unit (s, m, h or d) from 1s to 365d, e.g. --for 30s, --for 5m, --for 2h or --for 1d`,
    );
  }
  return Math.round(ms);
}

/** `90 000` ms as `1m30s`, `3 600 000` as `1h`: how long a watch lasted, for its last line. */
export function formatDuration(ms: number): string {
  let left = Math.round(ms / 1_000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
  ] as const) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    }
  }
  if (left > 0 || parts.length === 0) parts.push(`${left}s`);
  return parts.join("");
}

/**
 * Resolves once `ms` have passed (in steps a timer can hold, so days are fine), or as soon as
 * `signal` aborts; never rejects.
 */
export async function waitFor(ms: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + ms;
  while (!signal.aborted && Date.now() < deadline) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(deadline - Date.now(), 86_400_000));
      signal.addEventListener("abort", done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
    });
  }
}

/** A continuity's events handed to a callback as they are appended (catch-up, then live). */
export interface EventFollower {
  /** Resolves once every event up to `seq` was handed over (or following ended). */
  until(seq: number): Promise<void>;
  /** Stops following; resolves once the last event handed over was handled. */
  stop(): Promise<void>;
}

/**
 * Follows `continuity` from after `after`, calling `handle` with each event in seq order until
 * stopped. A store that closes under it ends the following quietly.
 */
export function followEvents(
  store: EventStore,
  continuity: string,
  after: number,
  handle: (event: SpoolEvent) => void,
): EventFollower {
  const controller = new AbortController();
  let handled = after;
  let waiter: { seq: number; resolve(): void } | undefined;
  const done = (async () => {
    try {
      for await (const message of store.subscribe({
        continuity,
        after,
        signal: controller.signal,
      })) {
        if (message.type !== "event") continue;
        handle(message.event);
        handled = message.event.seq;
        if (waiter && handled >= waiter.seq) waiter.resolve();
      }
    } catch {
      // The store closed under the follower: nothing more to show.
    }
  })();
  return {
    until(seq) {
      if (handled >= seq) return Promise.resolve();
      return Promise.race([
        new Promise<void>((resolve) => {
          waiter = { seq, resolve };
        }),
        done,
      ]);
    },
    async stop() {
      controller.abort();
      await done;
    },
  };
}
