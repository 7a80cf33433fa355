import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import {
  createWebSocketSource,
  type SourceCursor,
  type SourceEmission,
} from "../src/sources/index.js";
import {
  chunksOf,
  type LoopbackHttp,
  linesOf,
  networkDefinition,
  noticesOf,
  type SourceRun,
  startHttp,
  startRun,
  Watch,
} from "./support/network-source-harness.js";

let watch: Watch;
let server: LoopbackHttp | undefined;
let sockets: WebSocketServer | undefined;
const runs: SourceRun[] = [];

afterEach(async () => {
  for (const run of runs.splice(0)) await run.stop();
  for (const client of sockets?.clients ?? []) client.terminate();
  sockets?.close();
  sockets = undefined;
  await server?.close();
  server = undefined;
});

/** One connection the server accepted: what it received, and whether it closed. */
interface Accepted {
  socket: WebSocket;
  received: string[];
  closed: boolean;
  /** The `x-token` header of the opening request. */
  token: string | undefined;
}

/**
 * A WebSocket server on a loopback HTTP server (which answers `/ping`). `upgrade(n, …)` may
 * refuse the n-th upgrade itself (return true when it did); `open` runs for each connection.
 */
async function startWebSocketServer(
  open: (connection: Accepted, n: number) => void,
  upgrade: (n: number, socket: Duplex) => boolean = () => false,
): Promise<Accepted[]> {
  watch = new Watch();
  const accepted: Accepted[] = [];
  server = await startHttp(watch, (_request, response) => response.writeHead(200).end("pong"));
  const wss = new WebSocketServer({ noServer: true });
  sockets = wss;
  let upgrades = 0;
  server.server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrades += 1;
    if (upgrade(upgrades, socket)) return;
    wss.handleUpgrade(request, socket, head, (client) => {
      const connection: Accepted = {
        socket: client,
        received: [],
        closed: false,
        token: request.headers["x-token"] as string | undefined,
      };
      accepted.push(connection);
      client.on("message", (data) => {
        connection.received.push(data.toString());
        watch.changed();
      });
      client.on("close", () => {
        connection.closed = true;
        watch.changed();
      });
      watch.changed();
      open(connection, accepted.length);
    });
  });
  return accepted;
}

function start(
  options: Record<string, string | number | { [key: string]: string }> = {},
  extra: {
    cursor?: SourceCursor;
    maxLines?: number;
    accept?: (emission: SourceEmission) => Promise<void> | void;
  } = {},
): SourceRun {
  const url = `ws://127.0.0.1:${server!.port}/feed`;
  const definition = networkDefinition(
    "websocket",
    url,
    { retry_ms: 5, ...options },
    extra.maxLines !== undefined ? { maxLines: extra.maxLines } : {},
  );
  const run = startRun(createWebSocketSource(definition, { url: new URL(url) }), watch, extra);
  runs.push(run);
  return run;
}

describe("websocket source: messages and reconnects", () => {
  it("turns messages into lines with a { connection, messages } cursor", async () => {
    const accepted = await startWebSocketServer(({ socket }) => {
      socket.send("a\nb");
      socket.send("c\n");
    });
    const run = start(
      { headers: { "x-token": "abc" } },
      { cursor: { connection: 4, messages: 9 } },
    );
    await run.until("three lines", (all) => linesOf(all).length === 3);
    expect(accepted[0]!.token).toBe("abc");
    expect(linesOf(run.emissions)).toEqual(["a", "b", "c"]);
    expect(chunksOf(run.emissions).at(-1)!.cursor).toEqual({ connection: 5, messages: 2 });
  });

  it("reconnects after the server drops the connection, sending the subscribe message again", async () => {
    const accepted = await startWebSocketServer((connection, n) => {
      connection.socket.once("message", () => {
        connection.socket.send(`hello ${n}`);
        if (n === 1) connection.socket.terminate();
      });
    });
    const run = start({ subscribe: { op: "subscribe", topic: "logs" } });
    await run.until("a line from each connection", (all) => linesOf(all).length === 2);
    expect(linesOf(run.emissions)).toEqual(["hello 1", "hello 2"]);
    expect(accepted.map((connection) => connection.received)).toEqual([
      ['{"op":"subscribe","topic":"logs"}'],
      ['{"op":"subscribe","topic":"logs"}'],
    ]);
    const notices = noticesOf(run.emissions);
    expect(notices.map((notice) => [notice.code, notice.retryInMs])).toEqual([
      ["source.disconnected", 5],
    ]);
    expect(chunksOf(run.emissions).at(-1)!.cursor).toEqual({ connection: 2, messages: 1 });
  });

  it("reports a refused connection and an error status, backs off, then reads", async () => {
    await startWebSocketServer(
      ({ socket }) => socket.send("in at last"),
      (n, socket) => {
        if (n === 1) socket.destroy();
        else if (n === 2)
          socket.end("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
        return n <= 2;
      },
    );
    const run = start();
    await run.until("the message", (all) => linesOf(all).length === 1);
    expect(noticesOf(run.emissions).map((notice) => [notice.code, notice.retryInMs])).toEqual([
      ["source.unreachable", 5],
      ["source.http-status", 10],
    ]);
    expect(noticesOf(run.emissions)[1]!.message).toContain("503");
  });

  it("returns when aborted, closing the connection the server holds", async () => {
    const accepted = await startWebSocketServer(({ socket }) => socket.send("one"));
    const run = start();
    await run.until("the message", (all) => linesOf(all).length === 1);
    await run.stop();
    await watch.until("the server to see the close", () => accepted[0]!.closed);
    expect(run.returned).toBe(true);
  });
});

describe("websocket source: bad input", () => {
  it("decodes a binary message as UTF-8, counting the invalid bytes, and goes on", async () => {
    await startWebSocketServer(({ socket }) => {
      socket.send(Buffer.from([0xff, 0x61, 0x0a, 0x62, 0xc3]), { binary: true });
      socket.send("text after");
    });
    const run = start();
    await run.until("three lines", (all) => linesOf(all).length === 3);
    expect(linesOf(run.emissions)).toEqual(["\uFFFDa", "b\uFFFD", "text after"]);
    expect(chunksOf(run.emissions).reduce((sum, chunk) => sum + (chunk.invalidBytes ?? 0), 0)).toBe(
      2,
    );
  });

  it("drops a message over max_message_bytes with a notice and reconnects", async () => {
    await startWebSocketServer(({ socket }, n) => {
      socket.send(n === 1 ? "z".repeat(1_000) : "fits");
    });
    const run = start({ max_message_bytes: 100 });
    await run.until("the message that fits", (all) => linesOf(all).length === 1);
    expect(linesOf(run.emissions)).toEqual(["fits"]);
    expect(noticesOf(run.emissions).map((notice) => notice.code)).toEqual([
      "source.message-too-large",
    ]);
  });

  it("fails for good on a URL that is not ws(s) and on invalid options", async () => {
    watch = new Watch();
    const http = networkDefinition("websocket", "http://127.0.0.1:9/");
    const refused = startRun(createWebSocketSource(http, { url: new URL(http.target) }), watch);
    await refused.done;
    expect(refused.emissions).toMatchObject([{ type: "failed", code: "source.bad-target" }]);
    const bad = networkDefinition("websocket", "ws://127.0.0.1:9/", { max_message_bytes: 0 });
    const invalid = startRun(createWebSocketSource(bad, { url: new URL(bad.target) }), watch);
    await invalid.done;
    expect(invalid.emissions).toMatchObject([{ type: "failed", code: "source.bad-options" }]);
  });
});

describe("websocket source: backpressure", () => {
  it("pauses the socket while an emission waits, so the server cannot flush; then delivers everything once", async () => {
    const total = 256; // 16 MiB offered
    const payload = "w".repeat(64 * 1024);
    const flushed = { count: 0 };
    await startWebSocketServer(({ socket }) => {
      for (let n = 1; n <= total; n += 1) {
        socket.send(`${n} ${payload}`, () => {
          flushed.count += 1;
        });
      }
    });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    let emitted = 0;
    const run = start(
      {},
      {
        maxLines: 1,
        accept: async (emission) => {
          if (emission.type !== "chunk" || ++emitted !== 1) return;
          holding = true;
          watch.changed();
          await held;
        },
      },
    );
    await watch.until("the first emission held", () => holding);
    // Round trips on another connection until the server stops flushing, then twenty more: a
    // source that read on regardless would let the server flush all it sent.
    const ping = async () => (await fetch(server!.url("/ping"))).text();
    for (let before = -1; before !== flushed.count; ) {
      before = flushed.count;
      await ping();
    }
    for (let trip = 0; trip < 20; trip += 1) await ping();
    expect(flushed.count).toBeLessThan(total);
    release();
    await run.until("every message", (all) => linesOf(all).length === total);
    const ids = linesOf(run.emissions).map((line) => Number(line.split(" ")[0]));
    expect(ids).toEqual(Array.from({ length: total }, (_, index) => index + 1));
  });
});
