import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createSseSource, type SourceCursor, type SourceEmission } from "../src/sources/index.js";
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

/** One message of the test feed. */
interface FeedMessage {
  id: string;
  data: string;
  event?: string;
}

let watch: Watch;
let server: LoopbackHttp | undefined;
const runs: SourceRun[] = [];

afterEach(async () => {
  for (const run of runs.splice(0)) await run.stop();
  await server?.close();
  server = undefined;
});

function frame(message: FeedMessage): string {
  const event = message.event !== undefined ? `event: ${message.event}\n` : "";
  const data = message.data
    .split("\n")
    .map((line) => `data: ${line}\n`)
    .join("");
  return `${event}id: ${message.id}\n${data}\n`;
}

/**
 * A feed server: each connection gets the messages after its `Last-Event-ID` (all of them
 * without one), as far as `available` reaches, and then each one as it becomes available.
 */
async function startFeed(messages: FeedMessage[]) {
  watch = new Watch();
  const feed = {
    available: 0,
    lastEventIds: [] as (string | undefined)[],
    tokens: [] as (string | undefined)[],
  };
  const open = new Map<ServerResponse, number>();
  const pump = () => {
    for (const [response, next] of open) {
      let index = next;
      while (index < feed.available) response.write(frame(messages[index++]!));
      open.set(response, index);
    }
  };
  server = await startHttp(watch, (request, response) => {
    const header = request.headers["last-event-id"];
    const lastId = typeof header === "string" ? header : undefined;
    feed.lastEventIds.push(lastId);
    feed.tokens.push(request.headers["x-token"] as string | undefined);
    const after = lastId === undefined ? 0 : messages.findIndex((m) => m.id === lastId) + 1;
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    response.write(": hello\n\n");
    open.set(response, after);
    response.on("close", () => open.delete(response));
    pump();
    watch.changed();
  });
  return {
    feed,
    /** Makes the first `count` messages available and sends them to every open connection. */
    publish(count: number) {
      feed.available = count;
      pump();
    },
  };
}

function start(
  options: Record<string, string | number | string[] | Record<string, string>> = {},
  extra: {
    cursor?: SourceCursor;
    maxLines?: number;
    accept?: (emission: SourceEmission) => Promise<void> | void;
  } = {},
): SourceRun {
  const url = server!.url("/events");
  const definition = networkDefinition(
    "sse",
    url,
    { retry_ms: 5, ...options },
    extra.maxLines !== undefined ? { maxLines: extra.maxLines } : {},
  );
  const run = startRun(createSseSource(definition, { url: new URL(url) }), watch, extra);
  runs.push(run);
  return run;
}

const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => `m${from + index}`);

describe("sse source: exactly once across restarts", () => {
  it("delivers every message once, in order, across a server restart and a process restart", async () => {
    const messages = Array.from({ length: 15 }, (_, index) => ({
      id: String(index + 1),
      data: `m${index + 1}`,
    }));
    const { feed, publish } = await startFeed(messages);
    publish(5);
    const first = start({ headers: { "x-token": "secret" } });
    await first.until("m1..m5", (all) => linesOf(all).length === 5);
    await server!.restart();
    publish(10);
    await first.until("m6..m10 after the restart", (all) => linesOf(all).length === 10);
    expect(noticesOf(first.emissions, "source.disconnected")).toHaveLength(1);
    expect(noticesOf(first.emissions)[0]!.retryInMs).toBe(5);
    expect(feed.lastEventIds.slice(0, 2)).toEqual([undefined, "5"]);
    await first.stop();
    await watch.until("the stopped source's connection to close", () => server!.sockets.size === 0);

    const cursor = chunksOf(first.emissions).at(-1)!.cursor;
    expect(cursor).toEqual({ last_event_id: "10" });
    publish(15);
    const second = start({}, { cursor });
    await second.until("m11..m15", (all) => linesOf(all).length === 5);
    expect(feed.lastEventIds.at(-1)).toBe("10");
    expect(feed.tokens.slice(0, 2)).toEqual(["secret", "secret"]);
    expect([...linesOf(first.emissions), ...linesOf(second.emissions)]).toEqual(numbered(1, 15));
  });

  it("splits multi-line data into lines and resumes inside a message from lines_done", async () => {
    const { publish } = await startFeed([
      { id: "a", data: "a1\na2\na3" },
      { id: "b", data: "b1\nb2\nb3" },
    ]);
    publish(2);
    let chunks = 0;
    const first = start(
      {},
      {
        maxLines: 2,
        accept: (emission) => {
          if (emission.type === "chunk" && ++chunks === 2) throw new Error("runner stopped");
        },
      },
    );
    await first.done;
    expect(chunksOf(first.emissions).map((chunk) => [chunk.lines, chunk.cursor])).toEqual([
      [["a1", "a2"], { pending_id: "a", lines_done: 2 }],
    ]);
    const second = start({}, { maxLines: 2, cursor: chunksOf(first.emissions)[0]!.cursor });
    await second.until("the rest", (all) => linesOf(all).length === 4);
    expect(chunksOf(second.emissions).map((chunk) => [chunk.lines, chunk.cursor])).toEqual([
      [["a3", "b1"], { last_event_id: "a", pending_id: "b", lines_done: 1 }],
      [["b2", "b3"], { last_event_id: "b" }],
    ]);
  });
});

describe("sse source: bad input and failures", () => {
  it("replaces invalid UTF-8, ignores garbage lines, and goes on", async () => {
    watch = new Watch();
    server = await startHttp(watch, (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("id: 1\ndata: ok1\n\n");
      response.write(Buffer.from([...Buffer.from("id: 2\ndata: bad"), 0xff, 0xfe, 0x0a, 0x0a]));
      response.write("garbage without a colon\nnonsense: field\n\n:just a comment\n\n");
      response.write("id: 3\ndata: ok2\r\n\r\n");
    });
    const run = start();
    await run.until("ok2", (all) => linesOf(all).includes("ok2"));
    expect(linesOf(run.emissions)).toEqual(["ok1", "bad\uFFFD\uFFFD", "ok2"]);
    expect(chunksOf(run.emissions).at(-1)!.cursor).toEqual({ last_event_id: "3" });
  });

  it("reports an error status and a wrong content type, backs off, and reads once the server is right", async () => {
    watch = new Watch();
    let connections = 0;
    server = await startHttp(watch, (_request, response) => {
      connections += 1;
      if (connections === 1) response.writeHead(503).end("busy");
      else if (connections === 2)
        response.writeHead(200, { "content-type": "text/plain" }).end("hi");
      else {
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write("id: 1\ndata: finally\n\n");
      }
    });
    const run = start();
    await run.until("the message", (all) => linesOf(all).length === 1);
    expect(noticesOf(run.emissions).map((notice) => [notice.code, notice.retryInMs])).toEqual([
      ["source.http-status", 5],
      ["source.bad-content-type", 10],
    ]);
    expect(noticesOf(run.emissions)[0]!.message).toContain("503");
    expect(linesOf(run.emissions)).toEqual(["finally"]);
  });

  it("drops a message over max_message_bytes with a notice and reconnects", async () => {
    watch = new Watch();
    const seenIds: (string | undefined)[] = [];
    server = await startHttp(watch, (request, response) => {
      const lastId = request.headers["last-event-id"] as string | undefined;
      seenIds.push(lastId);
      response.writeHead(200, { "content-type": "text/event-stream" });
      if (lastId === undefined) {
        response.write("id: 1\ndata: small\n\n");
        response.write(`id: 2\ndata: ${"x".repeat(5_000)}\n\n`);
      } else {
        response.write("id: 3\ndata: after\n\n"); // a server that skips what it cannot send
      }
    });
    const run = start({ max_message_bytes: 1_000 });
    await run.until("the message after", (all) => linesOf(all).includes("after"));
    expect(linesOf(run.emissions)).toEqual(["small", "after"]);
    expect(noticesOf(run.emissions, "source.message-too-large")).toHaveLength(1);
    expect(seenIds).toEqual([undefined, "1"]);
  });

  it("takes unnamed messages by default, and exactly the listed events with options.events", async () => {
    watch = new Watch();
    server = await startHttp(watch, (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("event: a\ndata: from a\n\nevent: b\ndata: from b\n\ndata: plain\n\n");
      response.write("event: message\ndata: explicit\n\n");
    });
    const plain = start();
    await plain.until("two messages", (all) => linesOf(all).length === 2);
    expect(linesOf(plain.emissions)).toEqual(["plain", "explicit"]);
    const named = start({ events: ["b", "message"] });
    await named.until("three messages", (all) => linesOf(all).length === 3);
    expect(linesOf(named.emissions)).toEqual(["from b", "plain", "explicit"]);
  });

  it("ends with exhausted on HTTP 204, and fails for good on a URL that is not http(s)", async () => {
    watch = new Watch();
    server = await startHttp(watch, (_request, response) => response.writeHead(204).end());
    const run = start();
    await run.done;
    expect(run.emissions).toEqual([{ type: "exhausted", cursor: {} }]);
    const ws = networkDefinition("sse", "ws://127.0.0.1:9/");
    const refused = startRun(createSseSource(ws, { url: new URL(ws.target) }), watch);
    await refused.done;
    expect(refused.emissions).toMatchObject([{ type: "failed", code: "source.bad-target" }]);
  });
});

describe("sse source: backpressure", () => {
  it("stops reading while an emission waits, so the server's writes back up; then delivers everything once", async () => {
    watch = new Watch();
    const payload = "y".repeat(64 * 1024);
    const total = 256; // 16 MiB offered
    const stream = { sent: 0, blocked: false, drains: 0, bytesRead: 0 };
    server = await startHttp(watch, (request, response) => {
      if (request.url === "/ping") {
        response.writeHead(200).end("pong");
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const writeMore = () => {
        stream.blocked = false;
        while (stream.sent < total) {
          stream.sent += 1;
          if (!response.write(`id: ${stream.sent}\ndata: ${stream.sent} ${payload}\n\n`)) {
            stream.blocked = true;
            watch.changed();
            response.once("drain", () => {
              stream.drains += 1;
              writeMore();
            });
            return;
          }
        }
        watch.changed();
      };
      writeMore();
    });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    const counting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.body === null) return response;
      const counted = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            stream.bytesRead += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
      );
      return new Response(counted, { status: response.status, headers: response.headers });
    };
    const url = server.url("/events");
    const definition = networkDefinition("sse", url, { retry_ms: 5 }, { maxLines: 1 });
    const source = createSseSource(definition, { url: new URL(url), fetch: counting });
    let emitted = 0;
    const run = startRun(source, watch, {
      accept: async (emission) => {
        if (emission.type !== "chunk" || ++emitted !== 1) return;
        holding = true;
        watch.changed();
        await held;
      },
    });
    runs.push(run);
    await watch.until(
      "the first emission held and the server blocked",
      () => holding && stream.blocked,
    );
    const drainsBefore = stream.drains;
    // Twenty round trips on another connection: time enough for a source that read on regardless
    // to drain the socket and let the server write again. A source that waits does not.
    for (let trip = 0; trip < 20; trip += 1) await (await fetch(server.url("/ping"))).text();
    expect(stream.drains).toBe(drainsBefore);
    expect(stream.blocked).toBe(true);
    expect(stream.bytesRead).toBeLessThan(2 * 1024 * 1024);
    release();
    await run.until("every message", (all) => linesOf(all).length === total);
    const ids = linesOf(run.emissions).map((line) => Number(line.split(" ")[0]));
    expect(ids).toEqual(Array.from({ length: total }, (_, index) => index + 1));
  });
});
