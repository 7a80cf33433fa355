import { createHash } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpSource, type SourceCursor, type SourceEmission } from "../src/sources/index.js";
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

const sha256 = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

/** One request the server saw, and the status it answered. */
interface Seen {
  headers: IncomingHttpHeaders;
  status?: number;
}

let watch: Watch;
let server: LoopbackHttp | undefined;
const runs: SourceRun[] = [];

afterEach(async () => {
  for (const run of runs.splice(0)) await run.stop();
  await server?.close();
  server = undefined;
});

/** A server answering each request with `answer(request number from 1, request, response)`. */
async function serve(
  answer: (n: number, request: IncomingMessage, response: ServerResponse) => void,
): Promise<Seen[]> {
  watch = new Watch();
  const seen: Seen[] = [];
  server = await startHttp(watch, (request, response) => {
    const entry: Seen = { headers: request.headers };
    seen.push(entry);
    response.on("finish", () => {
      entry.status = response.statusCode;
      watch.changed();
    });
    answer(seen.length, request, response);
    watch.changed();
  });
  return seen;
}

function start(
  options: Record<string, string | number> = {},
  extra: {
    cursor?: SourceCursor;
    accept?: (emission: SourceEmission) => void;
    maxLines?: number;
    headers?: Record<string, string>;
  } = {},
): SourceRun {
  const url = server!.url("/feed");
  const definition = networkDefinition(
    "http",
    url,
    { interval_ms: 5, ...options, ...(extra.headers ? { headers: extra.headers } : {}) },
    extra.maxLines !== undefined ? { maxLines: extra.maxLines } : {},
  );
  const run = startRun(createHttpSource(definition, { url: new URL(url) }), watch, {
    cursor: extra.cursor,
    accept: extra.accept,
  });
  runs.push(run);
  return run;
}

/** Waits until the server has answered `count` requests. */
function answered(seen: Seen[], count: number): Promise<void> {
  return watch.until(
    `${count} answered requests`,
    () => seen.filter((entry) => entry.status !== undefined).length >= count,
  );
}

describe("http source: conditional requests and change-only delivery", () => {
  it("sends the ETag back as If-None-Match, delivers nothing on 304, and delivers a changed body", async () => {
    let current = { body: "alpha\nbeta\n", etag: '"v1"' };
    const seen = await serve((_n, request, response) => {
      if (request.headers["if-none-match"] === current.etag) {
        response.writeHead(304).end();
        return;
      }
      response.writeHead(200, { etag: current.etag }).end(current.body);
    });
    const run = start();
    await answered(seen, 3);
    expect(seen.slice(0, 3).map((entry) => [entry.headers["if-none-match"], entry.status])).toEqual(
      [
        [undefined, 200],
        ['"v1"', 304],
        ['"v1"', 304],
      ],
    );
    expect(chunksOf(run.emissions)).toEqual([
      {
        type: "chunk",
        lines: ["alpha", "beta"],
        bytes: 11,
        cursor: { etag: '"v1"', sha256: sha256("alpha\nbeta\n"), polls: 1 },
      },
    ]);
    current = { body: "gamma\n", etag: '"v2"' };
    await run.until("the changed body", (all) => chunksOf(all).length === 2);
    const second = chunksOf(run.emissions)[1]!;
    expect(second.lines).toEqual(["gamma"]);
    expect(second.cursor).toMatchObject({ etag: '"v2"', sha256: sha256("gamma\n") });
    expect(noticesOf(run.emissions)).toEqual([]);
  });

  it("sends Last-Modified back as If-Modified-Since and delivers nothing on 304", async () => {
    const modified = "Wed, 21 Oct 2015 07:28:00 GMT";
    const seen = await serve((_n, request, response) => {
      if (request.headers["if-modified-since"] === modified) response.writeHead(304).end();
      else response.writeHead(200, { "last-modified": modified }).end("one line\n");
    });
    const run = start({}, { headers: { authorization: "Bearer t0ken" } });
    await answered(seen, 4);
    expect(seen.every((entry) => entry.headers.authorization === "Bearer t0ken")).toBe(true);
    expect(
      seen.slice(1, 4).map((entry) => [entry.headers["if-modified-since"], entry.status]),
    ).toEqual([
      [modified, 304],
      [modified, 304],
      [modified, 304],
    ]);
    expect(linesOf(run.emissions)).toEqual(["one line"]);
    expect(chunksOf(run.emissions)[0]!.cursor).toEqual({
      last_modified: modified,
      sha256: sha256("one line\n"),
      polls: 1,
    });
  });

  it("without validators, a 200 with the same body delivers nothing; a different body is delivered", async () => {
    let body = "same\n";
    const seen = await serve((_n, _request, response) => response.writeHead(200).end(body));
    const run = start();
    await answered(seen, 4);
    expect(seen.every((entry) => entry.headers["if-none-match"] === undefined)).toBe(true);
    expect(linesOf(run.emissions)).toEqual(["same"]);
    body = "same\nand more\r\n";
    await run.until("the new body", (all) => chunksOf(all).length === 2);
    const answeredBefore = seen.length;
    await answered(seen, answeredBefore + 2);
    expect(linesOf(run.emissions)).toEqual(["same", "same", "and more"]);
  });
});

describe("http source: failures", () => {
  it("reports each 500 with a doubling backoff capped at max_backoff_ms, then recovers", async () => {
    const seen = await serve((n, _request, response) => {
      if (n <= 4) response.writeHead(500).end("boom");
      else response.writeHead(200).end("recovered\n");
    });
    const run = start({ max_backoff_ms: 12 });
    await run.until("the body after the errors", (all) => chunksOf(all).length === 1);
    const notices = noticesOf(run.emissions);
    expect(notices.map((notice) => [notice.code, notice.retryInMs])).toEqual([
      ["source.http-status", 5],
      ["source.http-status", 10],
      ["source.http-status", 12],
      ["source.http-status", 12],
    ]);
    expect(notices[0]!.message).toContain("HTTP 500");
    expect(linesOf(run.emissions)).toEqual(["recovered"]);
    expect(seen.length).toBeGreaterThanOrEqual(5);
  });

  it("reports a server that closes the connection at once as unreachable, then recovers", async () => {
    await serve((n, request, response) => {
      if (n <= 2) request.socket.destroy();
      else response.writeHead(200).end("finally\n");
    });
    const run = start();
    await run.until("the body", (all) => chunksOf(all).length === 1);
    expect(run.emissions.map((emission) => emission.type)).toEqual(["notice", "notice", "chunk"]);
    expect(noticesOf(run.emissions, "source.unreachable")).toHaveLength(2);
    expect(linesOf(run.emissions)).toEqual(["finally"]);
  });

  it("refuses a body over max_body_bytes, declared or streamed, and delivers the next one that fits", async () => {
    const big = `${"x".repeat(999)}\n`;
    await serve((n, _request, response) => {
      if (n === 1) {
        response.writeHead(200, { "content-length": String(big.length) }).end(big);
      } else if (n === 2) {
        response.writeHead(200); // chunked: no declared length
        for (let part = 0; part < 10; part += 1) response.write(big);
        response.end();
      } else {
        response.writeHead(200).end("small\n");
      }
    });
    const run = start({ max_body_bytes: 64 });
    await run.until("the small body", (all) => chunksOf(all).length === 1);
    const notices = noticesOf(run.emissions, "source.body-too-large");
    expect(notices).toHaveLength(2);
    expect(notices[0]!.message).toContain("1000 bytes");
    expect(notices[0]!.retryInMs).toBe(5);
    expect(linesOf(run.emissions)).toEqual(["small"]);
  });

  it("counts invalid UTF-8 and replaces it, keeping the rest of the body", async () => {
    const body = Buffer.from([0x61, 0xff, 0x62, 0x0a, 0x63, 0x0d, 0x0a]);
    await serve((_n, _request, response) => response.writeHead(200).end(body));
    const run = start();
    await run.until("the body", (all) => chunksOf(all).length === 1);
    expect(chunksOf(run.emissions)[0]).toMatchObject({
      lines: ["a\uFFFDb", "c"],
      bytes: 7,
      invalidBytes: 1,
      cursor: { sha256: sha256(body) },
    });
  });

  it("fails for good on a URL that is not http(s) and on invalid options, without a request", async () => {
    watch = new Watch();
    const ftp = networkDefinition("http", "ftp://127.0.0.1/feed");
    const refused = startRun(createHttpSource(ftp, { url: new URL(ftp.target) }), watch);
    await refused.done;
    expect(refused.emissions).toEqual([
      expect.objectContaining({ type: "failed", code: "source.bad-target" }),
    ]);
    const bad = networkDefinition("http", "http://127.0.0.1:9/", { interval_ms: -1, interval: 5 });
    const invalid = startRun(createHttpSource(bad, { url: new URL(bad.target) }), watch);
    await invalid.done;
    expect(invalid.emissions).toHaveLength(1);
    expect(invalid.emissions[0]).toMatchObject({ type: "failed", code: "source.bad-options" });
    expect((invalid.emissions[0] as { message: string }).message).toContain("interval_ms");
  });
});

describe("http source: cursors and stopping", () => {
  it("resumes from a cursor with its ETag, so an unchanged resource delivers nothing", async () => {
    let etag = '"v1"';
    let body = "first\n";
    const seen = await serve((_n, request, response) => {
      if (request.headers["if-none-match"] === etag) response.writeHead(304).end();
      else response.writeHead(200, { etag }).end(body);
    });
    const first = start();
    await first.until("the first body", (all) => chunksOf(all).length === 1);
    await first.stop();
    const cursor = chunksOf(first.emissions)[0]!.cursor;
    const before = seen.length;
    const second = start({}, { cursor: cursor });
    await answered(seen, before + 3);
    expect(seen[before]!.headers["if-none-match"]).toBe('"v1"');
    expect(seen.slice(before, before + 3).map((entry) => entry.status)).toEqual([304, 304, 304]);
    expect(second.emissions).toEqual([]);
    etag = '"v2"';
    body = "second\n";
    await second.until("the changed body", (all) => chunksOf(all).length === 1);
    expect(linesOf(second.emissions)).toEqual(["second"]);
    expect(Number(chunksOf(second.emissions)[0]!.cursor.polls)).toBeGreaterThan(
      Number(cursor.polls),
    );
  });

  it("delivers each line of a body once across a stop in the middle of it", async () => {
    let body = "l1\nl2\nl3\nl4\nl5\n";
    await serve((_n, _request, response) => response.writeHead(200, { etag: '"b"' }).end(body));
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
    expect(chunksOf(first.emissions).map((chunk) => chunk.lines)).toEqual([["l1", "l2"]]);
    const cursor = chunksOf(first.emissions)[0]!.cursor;
    expect(cursor).toEqual({ polls: 1, sha256_pending: sha256(body), lines_done: 2 });
    const second = start({}, { maxLines: 2, cursor: cursor });
    await second.until("the rest of the body", (all) => chunksOf(all).length === 2);
    expect(chunksOf(second.emissions).map((chunk) => chunk.lines)).toEqual([["l3", "l4"], ["l5"]]);
    expect(chunksOf(second.emissions)[1]!.cursor).toMatchObject({
      etag: '"b"',
      sha256: sha256(body),
    });
    // A body that changed while the source was stopped is delivered whole.
    body = "n1\nn2\nn3\n";
    const third = start({}, { maxLines: 2, cursor: cursor });
    await third.until("the new body", (all) => linesOf(all).length === 3);
    expect(linesOf(third.emissions)).toEqual(["n1", "n2", "n3"]);
  });

  it("returns when aborted in the middle of a request, and the server sees the connection close", async () => {
    let hanging: IncomingMessage | undefined;
    let hangingClosed = false;
    await serve((n, request, response) => {
      if (n === 1) {
        response.writeHead(200).end("one\n");
        return;
      }
      hanging ??= request;
      request.on("close", () => {
        hangingClosed = true;
        watch.changed();
      });
    });
    const run = start();
    await watch.until("a request the server holds", () => hanging !== undefined);
    await run.stop();
    await watch.until("the held request's connection to close", () => hangingClosed);
    expect(linesOf(run.emissions)).toEqual(["one"]);
  });
});
