import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { createHttpRelic, createRelicHost, type RelicHost } from "../src/relics/index.js";

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

interface TestServer {
  url: string;
  host: string;
  requests: Array<{
    method: string;
    url: string;
    body: string;
    headers: IncomingMessage["headers"];
  }>;
  handler: Handler;
  close(): Promise<void>;
}

async function startServer(): Promise<TestServer> {
  const state: TestServer = {
    url: "",
    host: "",
    requests: [],
    handler: (_request, _body, response) => response.end("ok"),
    close: async () => undefined,
  };
  const server: Server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      state.requests.push({
        method: request.method ?? "",
        url: request.url ?? "",
        body,
        headers: request.headers,
      });
      state.handler(request, body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  state.host = `127.0.0.1:${port}`;
  state.url = `http://${state.host}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

const continuity = "home";
let dir: string;
let store: EventStore;
let api: TestServer;
let other: TestServer;
let host: RelicHost;

const request = (parameters: Record<string, unknown>, signal?: AbortSignal) =>
  host.call("http", "request", parameters, signal ? { signal } : {});

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-relic-http-"));
  store = await openEventStore({ db: dir, durability: "fast" });
  api = await startServer();
  other = await startServer();
  host = createRelicHost({
    store,
    continuity,
    relics: [createHttpRelic({ baseUrl: `${api.url}/v1`, headers: { authorization: "Bearer t" } })],
  });
});
afterEach(async () => {
  await host.close();
  await api.close();
  await other.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the http relic", () => {
  it("sends requests under the base URL and decodes JSON answers", async () => {
    api.handler = (request, body, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ method: request.method, url: request.url, body }));
    };
    const got = await request({ path: "users/1", query: { full: true, n: 2 } });
    expect(got).toMatchObject({
      status: 200,
      ok: true,
      encoding: "json",
      body: { method: "GET", url: "/v1/users/1?full=true&n=2", body: "" },
    });
    const posted = await request({ method: "POST", path: "/users", body: { name: "Ada" } });
    expect(posted).toMatchObject({
      body: { method: "POST", url: "/v1/users", body: '{"name":"Ada"}' },
    });
    expect(api.requests[1]!.headers["content-type"]).toBe("application/json");
    expect(api.requests[1]!.headers.authorization).toBe("Bearer t");
  });

  it("returns HTTP errors as answers, not failures", async () => {
    api.handler = (_request, _body, response) => {
      response.statusCode = 404;
      response.setHeader("content-type", "text/plain");
      response.end("no such user");
    };
    expect(await request({ path: "users/9" })).toMatchObject({
      status: 404,
      ok: false,
      body: "no such user",
      encoding: "text",
    });
  });

  it("refuses hosts that are not allowed, also through a redirect, before sending anything", async () => {
    await expect(request({ path: `${other.url}/secret` })).rejects.toMatchObject({
      code: "relic.http.host-not-allowed",
      message: expect.stringContaining(`host "${other.host}" is not allowed`),
    });
    await expect(request({ path: `//${other.host}/secret` })).rejects.toMatchObject({
      code: "relic.http.host-not-allowed",
    });
    api.handler = (_request, _body, response) => {
      response.statusCode = 302;
      response.setHeader("location", `${other.url}/landing`);
      response.end();
    };
    await expect(request({ path: "go" })).rejects.toMatchObject({
      code: "relic.http.host-not-allowed",
      message: expect.stringContaining("through a redirect"),
    });
    expect(other.requests).toEqual([]);
    await expect(request({ path: "file:///etc/passwd" })).rejects.toMatchObject({
      code: "relic.http.bad-url",
    });
  });

  it("follows redirects to hosts on the allow-list", async () => {
    await host.close();
    host = createRelicHost({
      store,
      continuity,
      relics: [createHttpRelic({ baseUrl: api.url, allowedHosts: [other.host] })],
    });
    api.handler = (_request, _body, response) => {
      response.statusCode = 303;
      response.setHeader("location", `${other.url}/landing`);
      response.end();
    };
    other.handler = (_request, _body, response) => response.end("landed");
    expect(await request({ method: "POST", path: "form", body: "a=1" })).toMatchObject({
      status: 200,
      body: "landed",
      url: `${other.url}/landing`,
    });
    expect(other.requests.map((entry) => entry.method)).toEqual(["GET"]);
  });

  it("aborts a request when the call's signal aborts", async () => {
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    api.handler = () => arrived();
    const controller = new AbortController();
    const pending = request({ path: "slow" }, controller.signal);
    await reached;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: "relic.http.aborted", retryable: true });
  });

  it("aborts requests in flight when it stops", async () => {
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    api.handler = () => arrived();
    const pending = request({ path: "slow" });
    const outcome = pending.then(
      () => "answered",
      (error: { code: string }) => error.code,
    );
    await reached;
    await host.close();
    expect(await outcome).toBe("relic.http.stopped");
  });

  it("checks its configuration when it starts", async () => {
    await host.close();
    host = createRelicHost({
      store,
      continuity,
      relics: [createHttpRelic({ baseUrl: "ftp://files.example.com", allowedHosts: ["bad host"] })],
      maxRestarts: 0,
    });
    await expect(request({ path: "x" })).rejects.toMatchObject({
      code: "relic.start-failed",
      message: expect.stringMatching(
        /baseUrl: must be an http:\/\/ or https:\/\/ URL.*allowedHosts/,
      ),
    });
    expect(host.state("http")).toBe("broken");
  });
});
