import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { EventStore } from "../log/index.js";
import type { LiveHub, LiveSubscriber } from "./live-hub.js";

/** Catch-up events written to the socket at once, at most. */
const CATCH_UP_BATCH = 200;

/** Options of `liveEventsResponse`. */
export interface LiveEventsOptions {
  store: EventStore;
  /** The server's shared live subscriptions (one store subscription per continuity). */
  hub: LiveHub;
  continuity: string;
  /** Deliver the events after this seq (the client's `Last-Event-ID`, or `after`). */
  after: number;
  /** Only these event types (all when absent). */
  types?: readonly string[];
  /** Milliseconds between heartbeats (SSE comments); each one also re-checks `stillAllowed`. */
  heartbeatMs: number;
  /**
   * Whether the stream may go on (the token live, its role unchanged); checked at every
   * heartbeat. When it answers `false` the stream ends with an `error` event.
   */
  stillAllowed: () => Promise<boolean>;
  /** Registers a callback that ends the stream at once (a revocation); returns how to unregister. */
  onRevoked: (end: () => void) => () => void;
}

/**
 * The continuity's events as Server-Sent Events: each event is one message with `id:` its seq and
 * `data:` the event as JSON; once caught up, one `event: up-to-date` message (`data: {"seq":N}`,
 * no id) marks that what follows is live. The connection joins the server's `LiveHub` first (so
 * nothing committed from then on is missed), catches up from the store on its own from `after`,
 * then writes what the hub hands it, skipping what the catch-up already wrote: no gap, no
 * duplicate, and one store subscription per continuity however many clients follow it.
 * Reconnecting with `Last-Event-ID: N` resumes after N, across server restarts (the log is the
 * buffer). Heartbeats are `: heartbeat` comments. A client that falls behind the hub's buffer
 * while live is disconnected (a `: behind` comment, then the end of the stream) and resumes by
 * `Last-Event-ID`, as EventSource does by itself; one that disconnects leaves the hub; a revoked
 * token ends the stream with `event: error` (`{"code":"auth.revoked"}`).
 */
export function liveEventsResponse(c: Context, options: LiveEventsOptions): Response {
  c.header("Cache-Control", "no-cache, no-transform");
  c.header("X-Accel-Buffering", "no");
  return streamSSE(c, async (stream) => {
    const controller = new AbortController();
    let ended: { code: string; message: string } | undefined;
    const end = (why?: { code: string; message: string }) => {
      ended ??= why;
      controller.abort();
    };
    stream.onAbort(() => end());
    const stopRevoked = options.onRevoked(() =>
      end({ code: "auth.revoked", message: "the token was revoked" }),
    );
    const heartbeat = setInterval(() => {
      void (async () => {
        if (!(await options.stillAllowed().catch(() => false))) {
          end({ code: "auth.forbidden", message: "this token may no longer read the continuity" });
          return;
        }
        await stream.write(": heartbeat\n\n");
      })().catch(() => end());
    }, options.heartbeatMs);
    let subscriber: LiveSubscriber | undefined;
    try {
      const types = options.types ? new Set(options.types) : undefined;
      subscriber = await options.hub.join(
        options.continuity,
        types ? (type) => types.has(type) : undefined,
      );
      const last = await catchUp(stream, options, subscriber, controller.signal);
      if (last !== undefined) await follow(stream, subscriber, last, controller.signal, end);
      if (ended) await stream.writeSSE({ event: "error", data: JSON.stringify(ended) });
    } catch {
      // The client went away mid-write, or the store closed: either way the stream is over.
    } finally {
      subscriber?.leave();
      clearInterval(heartbeat);
      stopRevoked();
      controller.abort();
    }
  });
}

/** What the SSE helpers write to. */
interface SseWriter {
  write(text: string): Promise<unknown>;
  writeSSE(message: { event?: string; data: string; id?: string }): Promise<void>;
}

/**
 * Writes the store's events after `options.after` (in batches), again from where it stopped
 * while the hub dropped frames meanwhile, then the `up-to-date` marker; resolves with the last
 * seq written (or `after`), or `undefined` when the stream ended first.
 */
async function catchUp(
  stream: SseWriter,
  options: LiveEventsOptions,
  subscriber: LiveSubscriber,
  signal: AbortSignal,
): Promise<number | undefined> {
  let last = options.after;
  do {
    subscriber.resume();
    let batch = "";
    let count = 0;
    for await (const event of options.store.read({
      continuity: options.continuity,
      after: last,
      ...(options.types ? { types: options.types } : {}),
    })) {
      if (signal.aborted) return undefined;
      batch += `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;
      last = event.seq;
      if (++count >= CATCH_UP_BATCH) {
        await stream.write(batch);
        batch = "";
        count = 0;
      }
    }
    if (batch !== "") await stream.write(batch);
  } while (subscriber.overflowed);
  if (signal.aborted) return undefined;
  await stream.writeSSE({ event: "up-to-date", data: JSON.stringify({ seq: last }) });
  return last;
}

/**
 * Writes what the hub hands `subscriber`, skipping seqs at or below `last` (the catch-up wrote
 * them), until the stream ends; a subscriber that overflowed is ended (`: behind`).
 */
async function follow(
  stream: SseWriter,
  subscriber: LiveSubscriber,
  after: number,
  signal: AbortSignal,
  end: () => void,
): Promise<void> {
  let last = after;
  for (;;) {
    const frames = await subscriber.take(signal);
    if (frames === undefined) return;
    if (subscriber.overflowed) {
      await stream.write(": behind: reconnect with Last-Event-ID\n\n");
      end();
      return;
    }
    let text = "";
    for (const frame of frames) {
      if (frame.seq <= last) continue;
      text += frame.text;
      last = frame.seq;
    }
    if (text !== "") await stream.write(text);
  }
}
