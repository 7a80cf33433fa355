/**
 * The `websocket` source: reads a WebSocket feed with the `ws` package. Each message becomes
 * lines (its newlines split it): a text message as the UTF-8 `ws` has checked, a binary one decoded
 * as UTF-8 with invalid bytes replaced and counted. `options.subscribe` (a string as it is, any
 * other JSON value as JSON) is sent on every open, so a feed that wants a subscription gets it
 * again after each reconnect.
 *
 * Cursor: `{ connection, messages }`: the connection (counted from 1 over the source's whole life,
 * restarts included) and how many of its messages were delivered; a chunk that ends inside a
 * message adds `lines_done`. It is a position for people, not a resume point: a plain WebSocket has
 * no resume protocol, so messages the server sent while the source was disconnected, stopped or
 * restarting are not recovered (unless the server replays them on subscribe), and lines held in
 * a chunk when the source stops are lost with them.
 *
 * While an emission waits, the socket is paused (`ws.pause()`), so the server's sending stalls on
 * TCP backpressure rather than the source's memory growing. A message over `max_message_bytes`
 * (the `ws` `maxPayload`) closes the connection (1009): a `source.message-too-large` notice and a
 * reconnect.
 */
import WebSocket, { type RawData } from "ws";
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

/** How long an opening handshake may take before it counts as a failed connection. */
const HANDSHAKE_TIMEOUT_MS = 30_000;
/** How long a closing handshake may take before the socket is destroyed. */
const CLOSE_TIMEOUT_MS = 2_000;

/**
 * The `websocket` source's `options`: `headers` for the opening request, `subscribe` (sent on
 * every open), `retry_ms` (default 1,000) and `max_backoff_ms` (default 60,000) for reconnecting,
 * `max_message_bytes` (default 16 MiB).
 */
export const websocketSourceOptions = z.strictObject({
  headers: headersOption,
  subscribe: z.json().optional(),
  ...reconnectOptions,
  max_message_bytes: byteLimit(DEFAULT_MAX_MESSAGE_BYTES),
});
type WebSocketOptions = z.output<typeof websocketSourceOptions>;

const websocketCursor = z.object({ connection: z.number().int().nonnegative().optional() });

interface WebSocketRun {
  definition: SourceDefinition;
  url: URL;
  context: SourceContext;
  options: WebSocketOptions;
  delivery: LineDelivery;
  /** Connections opened so far (the current one's number once it opened). */
  connection: number;
  /** Messages of the current connection delivered so far. */
  messages: number;
}

/**
 * A `websocket` source reading `options.url` (the definition's target, parsed: `ws:` or `wss:`).
 * Its `run` never throws: a wrong option or another scheme is a `failed` emission; a refused
 * connection, an error status, a dropped connection or an oversized message is a notice, then a
 * reconnect after a backoff.
 */
export function createWebSocketSource(definition: SourceDefinition, options: { url: URL }): Source {
  return { definition, run: (context) => runWebSocketSource(definition, options.url, context) };
}

async function runWebSocketSource(
  definition: SourceDefinition,
  url: URL,
  context: SourceContext,
): Promise<void> {
  const checked = parseSourceOptions(definition, websocketSourceOptions);
  if ("failed" in checked) return emitFinal(context, checked.failed);
  const badTarget = checkScheme(definition, url, ["ws:", "wss:"]);
  if (badTarget !== undefined) return emitFinal(context, badTarget);
  const delivery = new LineDelivery(definition, context);
  const resumed = websocketCursor.safeParse(context.cursor ?? {});
  const run: WebSocketRun = {
    definition,
    url,
    context,
    options: checked.options,
    delivery,
    connection: resumed.success ? (resumed.data.connection ?? 0) : 0,
    messages: 0,
  };
  try {
    await reconnectLoop(run, connectOnce, (done) => ({
      connection: done.connection,
      messages: done.messages,
    }));
  } catch (error) {
    await delivery.report({
      type: "failed",
      code: "source.internal",
      message: `websocket source ${definition.id} stopped on an internal error: ${error instanceof Error ? error.message : String(error)}`,
    });
  } finally {
    delivery.close();
  }
}

/**
 * Opens one connection and delivers its messages until it closes (every message received before
 * is delivered first); returns once the socket is closed.
 */
async function connectOnce(run: WebSocketRun): Promise<{ end: ConnectionEnd; delivered: boolean }> {
  const { context, delivery, options } = run;
  const inbox = new MessageInbox<Buffer>();
  const socket = new WebSocket(run.url, {
    headers: options.headers,
    maxPayload: options.max_message_bytes,
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
  });
  const seen: { opened: boolean; status?: number; error?: Error; aborted: boolean } = {
    opened: false,
    aborted: false,
  };
  const closed = new Promise<ConnectionEnd>((resolve) => {
    socket.on("close", (code, reason) => {
      resolve(classify(run.url, seen, code, reason.toString("utf8")));
      inbox.end();
    });
  });
  socket.on("error", (error) => {
    seen.error ??= error;
  });
  socket.on("unexpected-response", (_request, response) => {
    seen.status = response.statusCode;
    response.resume();
    socket.terminate();
  });
  socket.on("open", () => {
    seen.opened = true;
    run.connection += 1;
    run.messages = 0;
    if (options.subscribe !== undefined) {
      const text =
        typeof options.subscribe === "string"
          ? options.subscribe
          : JSON.stringify(options.subscribe);
      socket.send(text, () => undefined);
    }
  });
  socket.on("message", (data) => {
    inbox.push(asBuffer(data));
    socket.pause();
  });
  const stop = () => {
    seen.aborted = true;
    closeSocket(socket);
  };
  context.signal.addEventListener("abort", stop, { once: true });
  if (context.signal.aborted) stop();
  let delivered = false;
  for (let message = await inbox.next(); message !== undefined; message = await inbox.next()) {
    if (!(await deliverMessage(run, message))) {
      stop();
      break;
    }
    delivered = true;
    if (inbox.size === 0) {
      await delivery.idle();
      if (inbox.size === 0) socket.resume();
    }
  }
  const end = await closed;
  context.signal.removeEventListener("abort", stop);
  return { end, delivered };
}

/** Closes `socket` cleanly, destroying it if the peer does not finish the closing handshake. */
function closeSocket(socket: WebSocket): void {
  if (socket.readyState === WebSocket.CLOSED) return;
  const timer = setTimeout(() => socket.terminate(), CLOSE_TIMEOUT_MS);
  socket.once("close", () => clearTimeout(timer));
  const open = socket.readyState === WebSocket.OPEN;
  socket.close(1000, "source stopped");
  // A paused socket would never read the peer's close frame.
  if (open) socket.resume();
}

function classify(
  url: URL,
  seen: { opened: boolean; status?: number; error?: Error; aborted: boolean },
  code: number,
  reason: string,
): ConnectionEnd {
  if (seen.aborted) return { kind: "aborted" };
  const detail = seen.error !== undefined ? `: ${seen.error.message}` : "";
  if (
    code === 1009 ||
    (seen.error as { code?: string } | undefined)?.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH"
  ) {
    return {
      kind: "retry",
      code: "source.message-too-large",
      message: `${url.href} sent a message over max_message_bytes; reconnecting: ${networkHint("source.message-too-large", url)}`,
    };
  }
  if (seen.status !== undefined) {
    return {
      kind: "retry",
      code: "source.http-status",
      message: `${url.href} answered HTTP ${seen.status} instead of opening a WebSocket: ${networkHint("source.http-status", url, seen.status)}`,
    };
  }
  if (!seen.opened) {
    return {
      kind: "retry",
      code: "source.unreachable",
      message: `${url.href} could not be reached${detail}: ${networkHint("source.unreachable", url)}`,
    };
  }
  const why = reason !== "" ? ` (${reason})` : "";
  return {
    kind: "retry",
    code: "source.disconnected",
    message: `${url.href} closed the connection with code ${code}${why}${seen.error !== undefined && code !== 1000 ? detail : ""}: ${networkHint("source.disconnected", url)}`,
  };
}

/** Delivers one message's lines; resolves `false` when the source stopped. */
async function deliverMessage(run: WebSocketRun, bytes: Buffer): Promise<boolean> {
  const splitter = new LineSplitter(run.definition.batching.maxLineBytes);
  const lines = [...splitter.push(bytes), ...splitter.end()];
  const connection = run.connection;
  const number = run.messages + 1;
  const cursorAfter = (linesDone: number): SourceCursor =>
    linesDone >= lines.length
      ? { connection, messages: number }
      : { connection, messages: number - 1, lines_done: linesDone };
  const going = await run.delivery.deliver(lines, cursorAfter);
  run.messages = number;
  return going;
}

function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
