import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { EventStore } from "../log/index.js";

/** Options of `liveEventsResponse`. */
export interface LiveEventsOptions {
  store: EventStore;
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
 * The continuity's events as Server-Sent Events, built directly on `EventStore.subscribe`: each
 * event is one message with `id:` its seq and `data:` the event as JSON; once caught up, one
 * `event: up-to-date` message (`data: {"seq":N}`, no id) marks that what follows is live.
 * Reconnecting with `Last-Event-ID: N` resumes after N with no gap and no duplicate, across
 * server restarts (the log is the buffer). Heartbeats are `: heartbeat` comments. A client that
 * disconnects ends the subscription; a revoked token ends the stream with
 * `event: error` (`{"code":"auth.revoked"}`) and `retry` is not sent, so it is not a gap.
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
    try {
      for await (const message of options.store.subscribe({
        continuity: options.continuity,
        after: options.after,
        ...(options.types ? { types: options.types } : {}),
        signal: controller.signal,
      })) {
        if (message.type === "event") {
          await stream.writeSSE({
            id: String(message.event.seq),
            data: JSON.stringify(message.event),
          });
        } else {
          await stream.writeSSE({
            event: "up-to-date",
            data: JSON.stringify({ seq: message.seq }),
          });
        }
      }
      if (ended) await stream.writeSSE({ event: "error", data: JSON.stringify(ended) });
    } catch {
      // The client went away mid-write, or the store closed: either way the stream is over.
    } finally {
      clearInterval(heartbeat);
      stopRevoked();
      controller.abort();
    }
  });
}
