import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../../src/spec/index.js";

/**
 * Where the recorded provider streams live: `test/fixtures/providers/`, a copy of
 * `../shared/fixtures/providers` kept in the repository (with its licences, sources and manifest),
 * so a fresh clone tests without anything beside it.
 */
export const PROVIDER_FIXTURES = fileURLToPath(new URL("../fixtures/providers/", import.meta.url));

/** The bytes of a fixture file, by its path under `PROVIDER_FIXTURES`. */
export function fixtureBytes(relative: string): Buffer {
  return readFileSync(PROVIDER_FIXTURES + relative);
}

/** One scripted HTTP answer of the replay server. */
export interface ReplayResponse {
  status?: number;
  headers?: Record<string, string>;
  /** The body, sent as these chunks in order (each a separate socket write). */
  chunks?: (string | Uint8Array)[];
  /**
   * What happens after the chunks: `end` (default) closes the response normally; `cut` destroys
   * the socket (a connection lost mid-stream); `stall` keeps it open and silent until the client
   * goes away.
   */
  after?: "end" | "cut" | "stall";
  /** Resolves before each chunk is written (lets a test interleave work with the stream). */
  beforeChunk?: (index: number) => Promise<void> | void;
}

/** A request the server received. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/**
 * A loopback HTTP server that answers each request with the next scripted response. The
 * questions Spool asks a local server about a model's window (`GET …/models`, `POST /api/show`,
 * `GET /props`) are answered 404 without taking a scripted answer and are not recorded, as a
 * server that does not know them answers: scripted answers stay the model calls'.
 */
export interface ReplayServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Queues answers for the next requests; once the queue is empty the last one repeats. */
  respond(...responses: ReplayResponse[]): void;
  /** Resolves when every response socket closed (after a client cancelled, for example). */
  closed(): Promise<void>;
  close(): Promise<void>;
}

/** Server-sent-event response headers. */
export const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** Starts a replay server on a free loopback port. */
export async function startReplayServer(): Promise<ReplayServer> {
  const queue: ReplayResponse[] = [];
  let last: ReplayResponse | undefined;
  const requests: ReceivedRequest[] = [];
  const open = new Set<ServerResponse>();
  let waiters: (() => void)[] = [];
  const settle = () => {
    if (open.size > 0) return;
    for (const waiter of waiters) waiter();
    waiters = [];
  };

  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (isWindowQuestion(req.method ?? "", req.url ?? "")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"not found"}');
      return;
    }
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    const answer = queue.shift() ?? last ?? { status: 500, chunks: ["no response scripted"] };
    last = answer;
    open.add(res);
    res.on("close", () => {
      open.delete(res);
      settle();
    });
    res.writeHead(answer.status ?? 200, { ...SSE_HEADERS, ...answer.headers });
    res.flushHeaders();
    const chunks = answer.chunks ?? [];
    for (let index = 0; index < chunks.length; index++) {
      await answer.beforeChunk?.(index);
      if (res.destroyed) return;
      await new Promise<void>((resolve) => res.write(chunks[index], () => resolve()));
    }
    if (answer.after === "cut") res.socket?.destroy();
    else if (answer.after !== "stall") res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond(...responses) {
      queue.push(...responses);
    },
    closed: () =>
      new Promise<void>((resolve) => (open.size === 0 ? resolve() : waiters.push(resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.socket?.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A window-discovery request (`discoverModelWindow`), not a model call. */
function isWindowQuestion(method: string, url: string): boolean {
  const path = url.split("?")[0] ?? "";
  return (
    (method === "GET" && (/\/models$/.test(path) || path === "/props")) ||
    (method === "POST" && path === "/api/show")
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

/** Splits `bytes` into chunks of `size` bytes (the last may be shorter); splits UTF-8 sequences. */
export function chunkBytes(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size)
    out.push(bytes.subarray(offset, offset + size));
  return out;
}

/** Splits `bytes` into chunks of 1…`max` bytes drawn from a seeded generator (same seed, same cut). */
export function randomChunks(bytes: Uint8Array, seed: number, max = 2000): Uint8Array[] {
  const random = seededRandom(seed);
  const out: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const size = 1 + Math.floor(random() * max);
    out.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return out;
}
