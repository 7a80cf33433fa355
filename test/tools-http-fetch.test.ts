import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyTool, ToolContext } from "../src/actions/index.js";
import { ConfigError } from "../src/spec/index.js";
import {
  builtinTools,
  type HttpFetchResult,
  isHostAllowed,
  parseAllowHosts,
} from "../src/tools/index.js";

function context(signal = new AbortController().signal): ToolContext {
  return { actionId: "a", attempt: 1, signal, progress: () => {} };
}

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

async function listen(handler: Handler): Promise<{ server: Server; origin: string; port: number }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handler(request, response, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}`, port };
}

let main: Awaited<ReturnType<typeof listen>>;
let other: Awaited<ReturnType<typeof listen>>;
let otherHits = 0;
let slowArrived: () => void = () => {};
let tools: AnyTool[];

beforeAll(async () => {
  other = await listen((request, response, body) => {
    otherHits += 1;
    response.end(
      JSON.stringify({ method: request.method, body, auth: request.headers.authorization ?? null }),
    );
  });
  main = await listen((request, response, body) => {
    const url = new URL(request.url ?? "/", "http://x");
    switch (url.pathname) {
      case "/text":
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8", "x-private": "1" });
        response.end("hello, wörld");
        return;
      case "/big":
        response.writeHead(200, { "content-type": "text/plain" });
        response.end("b".repeat(1000));
        return;
      case "/binary":
        response.writeHead(200, { "content-type": "application/octet-stream" });
        response.end(Buffer.from([0, 1, 2, 3]));
        return;
      case "/echo":
        response.writeHead(201, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            method: request.method,
            body,
            auth: request.headers.authorization ?? null,
            accept: request.headers.accept ?? null,
          }),
        );
        return;
      case "/to-text":
        response.writeHead(302, { location: "/text" });
        response.end();
        return;
      case "/post-then-see-other":
        response.writeHead(303, { location: "/echo" });
        response.end();
        return;
      case "/to-other":
        response.writeHead(307, { location: `${other.origin}/secret` });
        response.end();
        return;
      case "/to-file":
        response.writeHead(302, { location: "file:///etc/passwd" });
        response.end();
        return;
      case "/loop":
        response.writeHead(302, {
          location: `/loop?n=${Number(url.searchParams.get("n") ?? 0) + 1}`,
        });
        response.end();
        return;
      case "/slow":
        slowArrived();
        return; // never answers: the caller must abort
      default:
        response.writeHead(404, { "content-type": "text/plain" });
        response.end("no such page");
    }
  });
  tools = builtinTools({
    workspace: ".",
    http: { allowHosts: [`127.0.0.1:${main.port}`] },
    limits: { fetchBytes: 100 },
  });
});

afterAll(async () => {
  main.server.closeAllConnections();
  await new Promise((resolve) => main.server.close(resolve));
  await new Promise((resolve) => other.server.close(resolve));
});

function fetchTool(parameters: unknown, signal?: AbortSignal): Promise<HttpFetchResult> {
  const tool = tools.find((candidate) => candidate.name === "http.fetch")!;
  return Promise.resolve(
    tool.execute(tool.parameters.parse(parameters), context(signal)),
  ) as Promise<HttpFetchResult>;
}

describe("http.fetch", () => {
  it("fetches text with status and a subset of headers", async () => {
    const result = await fetchTool({ url: `${main.origin}/text` });
    expect(result).toMatchObject({
      url: `${main.origin}/text`,
      status: 200,
      body: "hello, wörld",
      truncated: false,
      binary: false,
      redirects: [],
    });
    expect(result.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(result.headers).not.toHaveProperty("x-private");
  });

  it("returns a 404 as a result, not an error", async () => {
    await expect(fetchTool({ url: `${main.origin}/missing` })).resolves.toMatchObject({
      status: 404,
      body: "no such page",
    });
  });

  it("sends a method, headers and body", async () => {
    const result = await fetchTool({
      url: `${main.origin}/echo`,
      method: "POST",
      headers: { accept: "application/json" },
      body: "payload",
    });
    expect(result.status).toBe(201);
    expect(JSON.parse(result.body)).toEqual({
      method: "POST",
      body: "payload",
      auth: null,
      accept: "application/json",
    });
  });

  it("caps the body and flags it; leaves a binary body out", async () => {
    const big = await fetchTool({ url: `${main.origin}/big` });
    expect(big.body).toBe("b".repeat(100));
    expect(big.truncated).toBe(true);
    await expect(fetchTool({ url: `${main.origin}/binary` })).resolves.toMatchObject({
      binary: true,
      body: "",
    });
  });

  it("follows redirects on allowed hosts, turning a POST into a GET on 303", async () => {
    await expect(fetchTool({ url: `${main.origin}/to-text` })).resolves.toMatchObject({
      status: 200,
      body: "hello, wörld",
      url: `${main.origin}/text`,
      redirects: [`${main.origin}/text`],
    });
    const seeOther = await fetchTool({
      url: `${main.origin}/post-then-see-other`,
      method: "POST",
      body: "form",
    });
    expect(JSON.parse(seeOther.body)).toMatchObject({ method: "GET", body: "" });
  });

  it("refuses a host that is not allowed, naming it and the setting", async () => {
    await expect(fetchTool({ url: `http://localhost:${main.port}/text` })).rejects.toMatchObject({
      code: "tool.host-not-allowed",
      retryable: false,
      message: expect.stringMatching(
        /host localhost:\d+ is not on this agent's allow-list.*tools\.http\.fetch\.allow_hosts/,
      ),
    });
  });

  it("refuses a redirect to a host that is not allowed, without contacting it", async () => {
    const hitsBefore = otherHits;
    await expect(fetchTool({ url: `${main.origin}/to-other` })).rejects.toMatchObject({
      code: "tool.host-not-allowed",
      message: expect.stringContaining(`127.0.0.1:${other.port}`),
    });
    expect(otherHits).toBe(hitsBefore);
  });

  it("drops credentials on a redirect to another allowed origin; 307 keeps method and body", async () => {
    const both = builtinTools({
      workspace: ".",
      http: { allowHosts: [`127.0.0.1:${main.port}`, `127.0.0.1:${other.port}`] },
    }).find((tool) => tool.name === "http.fetch")!;
    const parameters = {
      url: `${main.origin}/to-other`,
      method: "POST",
      headers: { authorization: "Bearer secret" },
      body: "kept",
    };
    const result = (await both.execute(
      both.parameters.parse(parameters),
      context(),
    )) as HttpFetchResult;
    expect(result.redirects).toEqual([`${other.origin}/secret`]);
    expect(JSON.parse(result.body)).toEqual({ method: "POST", body: "kept", auth: null });
  });

  it("refuses other schemes, first or redirected to", async () => {
    await expect(fetchTool({ url: "file:///etc/passwd" })).rejects.toMatchObject({
      code: "tool.bad-url",
    });
    await expect(fetchTool({ url: `${main.origin}/to-file` })).rejects.toMatchObject({
      code: "tool.bad-url",
      message: expect.stringContaining("a redirect from"),
    });
    await expect(fetchTool({ url: "not a url" })).rejects.toMatchObject({ code: "tool.bad-url" });
  });

  it("stops after five redirects", async () => {
    await expect(fetchTool({ url: `${main.origin}/loop` })).rejects.toMatchObject({
      code: "tool.too-many-redirects",
    });
  });

  it("refuses a body on GET", async () => {
    await expect(fetchTool({ url: `${main.origin}/echo`, body: "x" })).rejects.toMatchObject({
      code: "tool.bad-request",
    });
  });

  it("gives up when its signal is aborted", async () => {
    const arrived = new Promise<void>((resolve) => {
      slowArrived = resolve;
    });
    const controller = new AbortController();
    const pending = fetchTool({ url: `${main.origin}/slow` }, controller.signal);
    await arrived;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: "tool.aborted", retryable: true });
  });

  it("refuses everything when no host is allowed", async () => {
    const [, , , , fetch] = builtinTools({ workspace: "." });
    await expect(
      Promise.resolve(
        fetch!.execute(fetch!.parameters.parse({ url: `${main.origin}/text` }), context()),
      ),
    ).rejects.toMatchObject({
      code: "tool.host-not-allowed",
      message: expect.stringContaining("allowed: none"),
    });
  });
});

describe("allow-list entries", () => {
  const rules = parseAllowHosts([
    "api.example.com",
    "*.example.org",
    "127.0.0.1:8080",
    "[::1]:3000",
    "10.0.0.7:*",
  ]);

  it.each([
    ["https://api.example.com/x", true],
    ["http://api.example.com:9999/x", true],
    ["https://API.Example.COM./x", true],
    ["https://other.example.com/", false],
    ["https://a.b.example.org/", true],
    ["https://example.org/", false],
    ["https://evilexample.org/", false],
    ["http://127.0.0.1:8080/", true],
    ["http://127.0.0.1/", false],
    ["http://[::1]:3000/", true],
    ["http://[::1]:3001/", false],
    ["http://10.0.0.7:1234/", true],
    ["https://10.0.0.7/", true],
    ["http://10.0.0.8:1234/", false],
  ])("%s is allowed: %s", (url, expected) => {
    expect(isHostAllowed(rules, new URL(url))).toBe(expected);
  });

  it("refuses a malformed entry at setup with a ConfigError naming it", () => {
    expect(() => parseAllowHosts(["https://example.com/"])).toThrow(ConfigError);
    expect(() => builtinTools({ workspace: ".", http: { allowHosts: ["a b"] } })).toThrow(/"a b"/);
  });
});
