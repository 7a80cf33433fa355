/**
 * Load on the live events route, for the load test and `npm run bench -- server`: many SSE
 * subscribers (the `eventsource` package, as a Node client uses it, each its own connection) on
 * one continuity of a listening server, appends paced at a rate or sent in a burst, and what each
 * subscriber received: every seq in order, and each event's delivery latency (from just before
 * its append to its arrival, both read from this process's clock; the event carries its send
 * time at the end of its text, `turn <i> @<ms>`).
 */
import { setTimeout as sleepUntil } from "node:timers/promises";
import { EventSource } from "eventsource";
import type { EventStore } from "../../src/log/index.js";

/** What one subscriber received. */
export interface SubscriberRecord {
  seqs: number[];
  latencies: number[];
}

/** Subscribers on one continuity's live events. */
export interface Subscribers {
  records: SubscriberRecord[];
  /** Resolves once every subscriber has received the event `seq` (or a later one). */
  reached(seq: number): Promise<void>;
  close(): void;
}

/** Subscribers connected at once. */
const WAVE = 100;

const now = () => performance.timeOrigin + performance.now();

/**
 * Opens `count` subscribers on `continuity`'s live events after `after`, resolving once each has
 * passed its `up-to-date` marker (so what follows is live).
 */
export async function openSubscribers(options: {
  url: string;
  token: string;
  continuity: string;
  count: number;
  after: number;
}): Promise<Subscribers> {
  const { url, token, continuity, count, after } = options;
  const records: SubscriberRecord[] = [];
  const sources: EventSource[] = [];
  const lastSeqs: number[] = [];
  let waiting: { seq: number; resolve: () => void } | undefined;
  const check = () => {
    if (waiting && lastSeqs.every((seq) => seq >= waiting!.seq)) {
      const { resolve } = waiting;
      waiting = undefined;
      resolve();
    }
  };
  const ready: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const record: SubscriberRecord = { seqs: [], latencies: [] };
    records.push(record);
    lastSeqs.push(after);
    const source = new EventSource(
      `${url}/api/continuities/${continuity}/events/live?after=${after}`,
      {
        fetch: (input, init) =>
          fetch(input, {
            ...init,
            headers: { ...init?.headers, Authorization: `Bearer ${token}` },
          }),
      },
    );
    sources.push(source);
    source.onmessage = (message) => {
      const arrived = now();
      const event = JSON.parse(message.data) as { seq: number; data: { text?: string } };
      record.seqs.push(event.seq);
      const sent = /@(\d+(?:\.\d+)?)$/.exec(event.data.text ?? "");
      if (sent) record.latencies.push(arrived - Number(sent[1]));
      lastSeqs[i] = event.seq;
      check();
    };
    ready.push(
      new Promise<void>((resolve, reject) => {
        source.addEventListener("up-to-date", () => resolve(), { once: true });
        source.onerror = (error) => reject(new Error(`subscriber ${i}: ${error.message}`));
      }),
    );
    // Connects in waves, so a thousand connects at once do not overflow the listen backlog.
    if (ready.length % WAVE === 0) await Promise.all(ready.slice(-WAVE));
  }
  await Promise.all(ready);
  for (const source of sources) source.onerror = null;
  return {
    records,
    reached: (seq) =>
      new Promise<void>((resolve) => {
        waiting = { seq, resolve };
        check();
      }),
    close: () => {
      for (const source of sources) source.close();
    },
  };
}

/** A `turn.added` event carrying its send time. */
function turn(continuity: string, i: number) {
  return {
    continuity,
    type: "turn.added",
    actor: "load",
    origin: "test",
    data: { text: `turn ${i} @${now()}` },
  } as const;
}

/**
 * Appends `turn.added` events to `continuity` at `perSecond` for `seconds` (each one critical,
 * paced on the clock); returns their seqs. `onSecond` hears each second's end (memory samples).
 */
export async function paceTurns(
  store: EventStore,
  continuity: string,
  perSecond: number,
  seconds: number,
  onSecond?: (second: number) => void,
): Promise<number[]> {
  const seqs: number[] = [];
  const start = performance.now();
  const total = perSecond * seconds;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    // Pacing the writer at its rate, not waiting for anything to happen.
    if (wait > 0) await sleepUntil(wait);
    seqs.push((await store.append(turn(continuity, i))).seq);
    if ((i + 1) % perSecond === 0) onSecond?.((i + 1) / perSecond);
  }
  return seqs;
}

/** Appends `count` `turn.added` events at once, in batches of `batch`; returns their seqs. */
export async function burstTurns(
  store: EventStore,
  continuity: string,
  count: number,
  batch = 100,
): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i += batch) {
    const events = Array.from({ length: Math.min(batch, count - i) }, (_, j) =>
      turn(continuity, i + j),
    );
    for (const stored of await store.appendBatch(events)) seqs.push(stored.seq);
  }
  return seqs;
}
