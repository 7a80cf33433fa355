/**
 * The `sse` source: follows a server-sent event stream with the `eventsource` package (which
 * parses the stream) and delivers each message's data as lines (the data's own newlines split
 * it; `bytes` count the data and one newline per line, not the SSE framing).
 *
 * Which messages: without `options.events`, those the package hands to `onmessage` (no `event:`
 * field, or `event: message`); with it, exactly the named events listed (`"message"` included only
 * if listed). Other named events are ignored: the EventSource API has no way to receive every
 * name.
 *
 * Cursor and resumption: after a message's last line the cursor is `{ last_event_id }`, the id
 * of that message (or the id in force before it, for a message without one). A chunk that ends
 * inside a message (more lines than `maxLines`) carries the previous message's id plus
 * `{ pending_id, lines_done }`. Every connection, whether after a disconnect or after a process
 * restart, sends the last delivered id as `Last-Event-ID`; the first message after a
 * restart whose id is `pending_id` skips its `lines_done` logged lines. So with a server that
 * gives ids and resends after `Last-Event-ID`, every message is delivered exactly once. Messages
 * without ids cannot be resumed: a restart re-delivers from the last id the server gave.
 *
 * Reconnection is the source's own, not the package's: on any error it closes the EventSource,
 * emits a notice with `retryInMs`, waits (`retry_ms`, doubling up to `max_backoff_ms` while
 * connections fail without delivering a message) and opens a new one. The server's `retry:` field
 * is not honoured (the package keeps it private). HTTP 204, the protocol's "do not reconnect", is
 * an `exhausted` emission.
 */
import { EventSource } from "eventsource";
import { z } from "zod";
import { LineDelivery } from "./line-delivery.js";
import { LineSplitter } from "./line-splitter.js";
import { MessageInbox } from "./message-inbox.js";
import {
  byteLimit,
  checkScheme,
  DEFAULT_MAX_MESSAGE_BYTES,
  emitFinal,
  headersOption,
  networkHint,
  reconnectOptions,
} from "./network-options.js";
import { type ConnectionEnd, reconnectLoop } from "./reconnect-backoff.js";
import { parseSourceOptions } from "./source-options.js";
import type { Source, SourceContext, SourceCursor, SourceDefinition } from "./source-types.js";
import { createSseFetch } from "./sse-fetch.js";

const eventName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\r\n]*$/, "an event name has no line breaks");

/**
 * The `sse` source's `options`: `headers` for every request, `events` (names to take; default:
 * unnamed messages), `retry_ms` (default 1,000) and `max_backoff_ms` (default 60,000) for
 * reconnecting, `max_message_bytes` (default 16 MiB: a bigger message is a
 * `source.message-too-large` notice and a reconnect).
 */
export const sseSourceOptions = z.strictObject({
  headers: headersOption,
  events: z.array(eventName).min(1).optional(),
  ...reconnectOptions,
  max_message_bytes: byteLimit(DEFAULT_MAX_MESSAGE_BYTES),
});
type SseOptions = z.output<typeof sseSourceOptions>;

const sseCursor = z.object({
  last_event_id: z.string().optional(),
  pending_id: z.string().optional(),
  lines_done: z.number().int().nonnegative().optional(),
});

interface SseRun {
  definition: SourceDefinition;
  url: URL;
  fetchImpl: typeof fetch;
  context: SourceContext;
  options: SseOptions;
  delivery: LineDelivery;
  /** The id of the last message delivered (what `Last-Event-ID` says). */
  lastId: string | undefined;
  /** From a cursor that ended inside a message: that message's id and its lines logged. */
  resume: { id: string; linesDone: number } | undefined;
}

/**
 * An `sse` source reading `options.url` (the definition's target, parsed) through
 * `options.fetch` (default: the global `fetch`). Its `run` never throws: a wrong option or a URL
 * that is not http(s) is a `failed` emission; a refused connection, an error status, a wrong
 * content type, a dropped stream or an oversized message is a notice, then a reconnect.
 */
export function createSseSource(
  definition: SourceDefinition,
  options: { url: URL; fetch?: typeof fetch },
): Source {
  return {
    definition,
    run: (context) => runSseSource(definition, options.url, options.fetch ?? fetch, context),
  };
}

async function runSseSource(
  definition: SourceDefinition,
  url: URL,
  fetchImpl: typeof fetch,
  context: SourceContext,
): Promise<void> {
  const checked = parseSourceOptions(definition, sseSourceOptions);
  if ("failed" in checked) return emitFinal(context, checked.failed);
  const badTarget = checkScheme(definition, url, ["http:", "https:"]);
  if (badTarget !== undefined) return emitFinal(context, badTarget);
  const delivery = new LineDelivery(definition, context);
  const run: SseRun = {
    definition,
    url,
    fetchImpl,
    context,
    options: checked.options,
    delivery,
    lastId: undefined,
    resume: undefined,
  };
  try {
    await resumeFrom(run, context.cursor);
    await reconnectLoop(run, connectOnce, lastCursor);
  } catch (error) {
    await delivery.report({
      type: "failed",
      code: "source.internal",
      message: `sse source ${definition.id} stopped on an internal error: ${error instanceof Error ? error.message : String(error)}`,
    });
  } finally {
    delivery.close();
  }
}

async function resumeFrom(run: SseRun, cursor: SourceCursor | undefined): Promise<void> {
  if (cursor === undefined) return;
  const parsed = sseCursor.safeParse(cursor);
  if (!parsed.success) {
    await run.delivery.report({
      type: "notice",
      code: "source.bad-cursor",
      message:
        "the logged cursor is not an sse cursor; reading the stream from where the server starts",
    });
    return;
  }
  run.lastId = parsed.data.last_event_id;
  if (parsed.data.pending_id !== undefined) {
    run.resume = { id: parsed.data.pending_id, linesDone: parsed.data.lines_done ?? 0 };
  }
}

/**
 * Opens one EventSource and delivers its messages until it ends (every message received before
 * the end is delivered first). Resolves how it ended and whether it delivered anything.
 */
async function connectOnce(run: SseRun): Promise<{ end: ConnectionEnd; delivered: boolean }> {
  const { context, delivery, options } = run;
  const inbox = new MessageInbox<{ data: string; id: string }>();
  let end: ConnectionEnd | undefined;
  let opened = false;
  let tooLarge = false;
  let releaseGate = () => {};
  const over = new Promise<void>((resolve) => {
    releaseGate = resolve;
  });
  const fetchLike = createSseFetch(
    {
      headers: options.headers,
      lastEventId: () => run.lastId,
      ready: () => Promise.race([inbox.whenDrained().then(() => delivery.idle()), over]),
      maxMessageBytes: options.max_message_bytes,
      onTooLarge: () => {
        tooLarge = true;
      },
      signal: context.signal,
    },
    run.fetchImpl,
  );
  const source = new EventSource(run.url, { fetch: fetchLike });
  const finish = (how: ConnectionEnd) => {
    if (end !== undefined) return;
    end = how;
    // Closed after the package's own error handling, which sets a reconnect timer close() clears.
    queueMicrotask(() => source.close());
    releaseGate();
    inbox.end();
  };
  const onAbort = () => finish({ kind: "aborted" });
  source.onopen = () => {
    opened = true;
  };
  const take = (event: MessageEvent) =>
    inbox.push({ data: String(event.data), id: event.lastEventId });
  if (options.events === undefined) source.onmessage = take;
  else for (const name of options.events) source.addEventListener(name, take);
  source.onerror = (event) => finish(classify(run.url, event, opened, tooLarge));
  context.signal.addEventListener("abort", onAbort, { once: true });
  if (context.signal.aborted) onAbort();
  let delivered = false;
  for (let message = await inbox.next(); message !== undefined; message = await inbox.next()) {
    if (delivery.stopped || !(await deliverMessage(run, message))) {
      finish({ kind: "aborted" });
      break;
    }
    delivered = true;
  }
  context.signal.removeEventListener("abort", onAbort);
  return { end: end ?? { kind: "aborted" }, delivered };
}

/** What an `error` event of the package means, by what the connection had done. */
function classify(
  url: URL,
  event: { code?: number | undefined; message?: string | undefined },
  opened: boolean,
  tooLarge: boolean,
): ConnectionEnd {
  const detail = event.message ? `: ${event.message}` : "";
  if (tooLarge) {
    return {
      kind: "retry",
      code: "source.message-too-large",
      message: `${url.href} sent a message over max_message_bytes; reconnecting (the server may resend it): ${networkHint("source.message-too-large", url)}`,
    };
  }
  if (opened) {
    return {
      kind: "retry",
      code: "source.disconnected",
      message: `${url.href} closed the stream${detail}: ${networkHint("source.disconnected", url)}`,
    };
  }
  if (event.code === 204) return { kind: "exhausted" };
  if (event.code !== undefined && event.code !== 200) {
    return {
      kind: "retry",
      code: "source.http-status",
      message: `${url.href} answered HTTP ${event.code}: ${networkHint("source.http-status", url, event.code)}`,
    };
  }
  if (event.code === 200) {
    return {
      kind: "retry",
      code: "source.bad-content-type",
      message: `${url.href} answered 200 but not with text/event-stream: is it an SSE endpoint?`,
    };
  }
  return {
    kind: "retry",
    code: "source.unreachable",
    message: `${url.href} could not be reached${detail}: ${networkHint("source.unreachable", url)}`,
  };
}

/** Delivers one message's lines; resolves `false` when the source stopped. */
async function deliverMessage(
  run: SseRun,
  message: { data: string; id: string },
): Promise<boolean> {
  const ownId = message.id !== "" ? message.id : undefined;
  const idAfter = ownId ?? run.lastId;
  const splitter = new LineSplitter(run.definition.batching.maxLineBytes);
  const lines = [...splitter.push(Buffer.from(`${message.data}\n`, "utf8")), ...splitter.end()];
  const skip = run.resume !== undefined && run.resume.id === ownId ? run.resume.linesDone : 0;
  run.resume = undefined;
  const before = lastCursor(run);
  const whole: SourceCursor = idAfter !== undefined ? { last_event_id: idAfter } : {};
  const cursorAfter = (linesDone: number): SourceCursor => {
    if (linesDone >= lines.length) return whole;
    return ownId !== undefined ? { ...before, pending_id: ownId, lines_done: linesDone } : before;
  };
  const going = await run.delivery.deliver(lines, cursorAfter, { skip });
  run.lastId = idAfter;
  return going;
}

function lastCursor(run: SseRun): SourceCursor {
  return run.lastId !== undefined ? { last_event_id: run.lastId } : {};
}
