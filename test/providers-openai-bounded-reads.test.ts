import { describe, expect, it } from "vitest";
import { boundedReadFetch } from "../src/providers/openai/bounded-reads.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

describe("boundedReadFetch", () => {
  it("hands the body over in pieces of at most the bound, unchanged, with status and headers", async () => {
    const server: ReplayServer = await startReplayServer();
    try {
      const body = Buffer.from("é".repeat(9_000), "utf8");
      server.respond({ status: 201, headers: { "x-request-id": "req_1" }, chunks: [body] });
      const response = await boundedReadFetch(globalThis.fetch, 1000)(`${server.url}/v1`, {
        method: "POST",
        body: "{}",
      });
      expect(response.status).toBe(201);
      expect(response.headers.get("x-request-id")).toBe("req_1");
      const pieces: Uint8Array[] = [];
      for await (const piece of response.body!) pieces.push(piece);
      expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(1000);
      expect(Buffer.concat(pieces).equals(body)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("closes the request when the reader cancels", async () => {
    const server: ReplayServer = await startReplayServer();
    try {
      server.respond({ chunks: ["data: 1\n\n"], after: "stall" });
      const response = await boundedReadFetch(globalThis.fetch)(`${server.url}/v1`, {
        method: "POST",
        body: "{}",
      });
      const reader = response.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      await reader.cancel();
      await server.closed();
    } finally {
      await server.close();
    }
  });
});
