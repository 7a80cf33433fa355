import type { EventStore } from "../log/index.js";
import type { SpoolEvent } from "../spec/index.js";

/** One event as every live connection sends it: its seq, type and SSE message, made once. */
export interface LiveFrame {
  readonly seq: number;
  readonly type: string;
  /** `id: <seq>\ndata: <event as JSON>\n\n` (JSON has no raw newline, so one `data:` line). */
  readonly text: string;
}

/** Options of `LiveHub`. */
export interface LiveHubOptions {
  /**
   * Events a connection may have waiting to be written (default 1,000). Past it the connection's
   * queue is dropped and it is told (`LiveSubscriber.overflowed`): a connection still catching up
   * reads the store again from its position; a live one is disconnected and resumes by
   * `Last-Event-ID`.
   */
  buffer?: number;
}

/** The default of `LiveHubOptions.buffer`. */
export const DEFAULT_LIVE_BUFFER = 1_000;

/**
 * The live events of a server's connections: ONE `EventStore.subscribe` per continuity that has
 * live connections, whatever their number. Each new event is read once, made into its SSE message
 * once (`LiveFrame`), and queued to every connection of its continuity whose types accept it;
 * each connection writes its own queue at its own pace, so a slow client never holds the others
 * or the store's reader up. The subscription starts at the first connection and ends with the
 * last.
 *
 * Guarantees: a subscriber receives every event of its continuity committed after it joined, in
 * seq order, until it leaves or its queue overflows (then `overflowed` is set and its queue
 * dropped; it may `resume` from its own position). A subscriber never blocks `push`.
 */
export class LiveHub {
  readonly #store: EventStore;
  readonly #buffer: number;
  readonly #channels = new Map<string, Channel>();

  constructor(store: EventStore, options: LiveHubOptions = {}) {
    this.#store = store;
    this.#buffer = Math.max(1, options.buffer ?? DEFAULT_LIVE_BUFFER);
  }

  /** Continuities followed now (one store subscription each). */
  get channels(): number {
    return this.#channels.size;
  }

  /** The connections following `continuity` now. */
  subscribers(continuity: string): number {
    return this.#channels.get(continuity)?.subscribers.size ?? 0;
  }

  /**
   * Joins `continuity`'s channel (starting its store subscription at the log's head when it is
   * the first): the subscriber queues each event committed from now on that `accepts` takes.
   * Call `leave` when done.
   */
  async join(continuity: string, accepts?: (type: string) => boolean): Promise<LiveSubscriber> {
    let channel = this.#channels.get(continuity);
    if (!channel) {
      channel = new Channel(this.#store, continuity, () => {
        if (this.#channels.get(continuity) === channel) this.#channels.delete(continuity);
      });
      this.#channels.set(continuity, channel);
    }
    const subscriber = new LiveSubscriber(channel, this.#buffer, accepts);
    channel.add(subscriber);
    await channel.ready;
    return subscriber;
  }
}

/** One continuity's store subscription and the connections it feeds. */
class Channel {
  readonly subscribers = new Set<LiveSubscriber>();
  readonly ready: Promise<void>;
  readonly #stop = new AbortController();
  readonly #gone: () => void;
  /** A wake of the connections is scheduled. */
  #waking = false;

  constructor(store: EventStore, continuity: string, gone: () => void) {
    this.#gone = gone;
    let started!: () => void;
    this.ready = new Promise<void>((resolve) => {
      started = resolve;
    });
    void this.#run(store, continuity, started);
  }

  add(subscriber: LiveSubscriber): void {
    this.subscribers.add(subscriber);
  }

  remove(subscriber: LiveSubscriber): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size === 0) this.#close();
  }

  async #run(store: EventStore, continuity: string, started: () => void): Promise<void> {
    try {
      const after = await store.head();
      started();
      for await (const message of store.subscribe({
        continuity,
        after,
        signal: this.#stop.signal,
      })) {
        if (message.type === "event") this.#dispatch(message.event);
      }
    } catch {
      // The store closed or failed: every connection ends, and reconnects by Last-Event-ID.
    } finally {
      started();
      this.#close();
      for (const subscriber of this.subscribers) subscriber.end();
    }
  }

  #dispatch(event: SpoolEvent): void {
    let frame: LiveFrame | undefined;
    for (const subscriber of this.subscribers) {
      if (!subscriber.accepts(event.type)) continue;
      frame ??= {
        seq: event.seq,
        type: event.type,
        text: `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`,
      };
      subscriber.push(frame);
    }
    if (frame && !this.#waking) {
      // The connections are woken once the page of events the subscription holds is queued
      // (after the microtasks that hand it over), so each writes a page in one go rather than
      // one socket write per event.
      this.#waking = true;
      setImmediate(() => {
        this.#waking = false;
        for (const subscriber of this.subscribers) subscriber.wake();
      });
    }
  }

  #close(): void {
    this.#stop.abort();
    this.#gone();
  }
}

/**
 * A connection's place in a `LiveHub` channel: its bounded queue of frames. `take` waits for
 * frames and hands over all that wait; `overflowed` says frames were dropped because the queue
 * was full (the connection fell behind), and `resume` clears it to go on reading the store.
 */
export class LiveSubscriber {
  readonly #channel: Channel;
  readonly #limit: number;
  readonly #accepts: ((type: string) => boolean) | undefined;
  #queue: LiveFrame[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  /** Frames were dropped since the last `resume`: the queue was full. */
  overflowed = false;

  constructor(channel: Channel, limit: number, accepts?: (type: string) => boolean) {
    this.#channel = channel;
    this.#limit = limit;
    this.#accepts = accepts;
  }

  /** Whether this subscriber wants events of `type`. */
  accepts(type: string): boolean {
    return this.#accepts === undefined || this.#accepts(type);
  }

  /**
   * Queues `frame` (never blocks); a full queue is dropped and `overflowed` set. The channel
   * wakes the subscriber (`wake`) once its batch is queued.
   */
  push(frame: LiveFrame): void {
    if (this.#ended) return;
    if (this.#queue.length >= this.#limit) {
      this.#queue = [];
      this.overflowed = true;
    } else {
      this.#queue.push(frame);
    }
  }

  /** Lets a waiting `take` hand over what is queued. */
  wake(): void {
    this.#wakeUp();
  }

  /** Clears `overflowed` (the caller reads what was dropped from the store). */
  resume(): void {
    this.overflowed = false;
  }

  /**
   * Resolves with every frame waiting (at least one), or with `undefined` once the channel ended,
   * the subscriber left, or `signal` aborted. Returns at once, with none, after an overflow.
   */
  async take(signal?: AbortSignal): Promise<LiveFrame[] | undefined> {
    while (this.#queue.length === 0 && !this.overflowed) {
      if (this.#ended || signal?.aborted) return undefined;
      let aborted: (() => void) | undefined;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        aborted = () => resolve();
        signal?.addEventListener("abort", aborted, { once: true });
      });
      if (aborted) signal?.removeEventListener("abort", aborted);
      this.#wake = undefined;
    }
    const frames = this.#queue;
    this.#queue = [];
    return frames;
  }

  /** Ends the subscriber (its channel ended): `take` answers `undefined`. */
  end(): void {
    this.#ended = true;
    this.#queue = [];
    this.#wakeUp();
  }

  /** Leaves the channel (the last one to leave ends its store subscription). */
  leave(): void {
    this.end();
    this.#channel.remove(this);
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
