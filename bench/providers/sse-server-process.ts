/**
 * A loopback server in its own process (so its CPU is not counted as the client's): answers every
 * POST with the SSE body named by the path (`/anthropic/v1/messages` or `/openai/chat/completions`),
 * written at full speed. Prints its port on stdout, then serves until killed.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicBody, openaiChatBody } from "./sse-workload.js";

const deltas = Number(process.argv[2] ?? 50_000);
const bodies = { anthropic: anthropicBody(deltas), openai: openaiChatBody(deltas) };
const WRITE = 64 * 1024;

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const body = req.url?.startsWith("/openai") ? bodies.openai : bodies.anthropic;
    // No keep-alive: a pooled socket the server timed out would fail the next client at random.
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "close",
    });
    let offset = 0;
    const pump = () => {
      while (offset < body.length) {
        const more = res.write(body.subarray(offset, offset + WRITE));
        offset += WRITE;
        if (!more) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
