/**
 * Tokens outlive the process, and an expired one is refreshed: an MCP server (the SDK's
 * McpServer over Streamable HTTP) behind a small OAuth authorization server on loopback that
 * approves at once and issues refresh tokens. A first relic host signs in; the server then
 * revokes that access token; a second relic host (a later session, reading the same 0600 file)
 * meets 401, refreshes without a new sign-in, and its call succeeds.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createMcpRelic, type McpServerConfig, openMcpOAuthStore } from "../src/mcp/index.js";
import { createRelicHost } from "../src/relics/index.js";
import { tempStore } from "./support/transcripts.js";

let http: Server;
let base: string;
let dir: string;
let store: EventStore;
let cleanup: () => Promise<void>;
const valid = new Set<string>();
const refreshTokens = new Set<string>();
const seen = { authorize: 0, codeGrants: 0, refreshGrants: 0, unauthorized: 0 };
/** False: the authorization endpoint shows a login page, as one that needs a person does. */
let approveAtOnce = true;

const json = (res: ServerResponse, status: number, body: unknown, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const body = async (req: IncomingMessage) => {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
};
const issue = (res: ServerResponse) => {
  const access = `at-${randomBytes(6).toString("hex")}`;
  const refresh = `rt-${randomBytes(6).toString("hex")}`;
  valid.add(access);
  refreshTokens.add(refresh);
  json(res, 200, {
    access_token: access,
    token_type: "Bearer",
    expires_in: 3600,
    refresh_token: refresh,
  });
};

async function handle(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", base);
  if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
    return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base] });
  }
  if (url.pathname === "/.well-known/oauth-authorization-server") {
    return json(res, 200, {
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      registration_endpoint: `${base}/register`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
    });
  }
  if (url.pathname === "/register") {
    const registration = JSON.parse(await body(req)) as Record<string, unknown>;
    return json(res, 201, { ...registration, client_id: "registered-client" });
  }
  if (url.pathname === "/authorize") {
    seen.authorize++;
    if (!approveAtOnce) {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end("<form>Sign in</form>");
    }
    const back = new URL(url.searchParams.get("redirect_uri")!);
    back.searchParams.set("code", "the-code");
    back.searchParams.set("state", url.searchParams.get("state") ?? "");
    res.writeHead(302, { location: back.href });
    return res.end();
  }
  if (url.pathname === "/token") {
    const form = new URLSearchParams(await body(req));
    if (form.get("grant_type") === "authorization_code" && form.get("code") === "the-code") {
      seen.codeGrants++;
      return issue(res);
    }
    if (
      form.get("grant_type") === "refresh_token" &&
      refreshTokens.delete(form.get("refresh_token")!)
    ) {
      seen.refreshGrants++;
      return issue(res);
    }
    return json(res, 400, { error: "invalid_grant" });
  }
  if (url.pathname === "/mcp") {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!token || !valid.has(token)) {
      seen.unauthorized++;
      return json(
        res,
        401,
        { error: "invalid_token" },
        {
          "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        },
      );
    }
    const server = new McpServer({ name: "guarded", version: "1.0.0" });
    server.registerTool("whoami", { description: "Says who you are." }, async () => ({
      content: [{ type: "text", text: "an authorized client" }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void server.close());
    await server.connect(transport);
    return transport.handleRequest(
      req,
      res,
      req.method === "POST" ? JSON.parse(await body(req)) : undefined,
    );
  }
  res.writeHead(404).end();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-mcp-refresh-"));
  ({ store, cleanup } = await tempStore("spool-mcp-refresh-store-"));
  http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const server = (credentials = "mcp-oauth"): McpServerConfig => ({
  name: "guarded",
  file: ".ai/mcp.json",
  timeoutSeconds: 20,
  fingerprint: "f",
  transport: "http",
  url: `${base}/mcp`,
  headers: {},
  oauth: { grantType: "authorization_code" },
  credentialsDir: join(dir, credentials),
});

async function callOnce(credentials?: string): Promise<unknown> {
  const relic = createMcpRelic(server(credentials));
  const host = createRelicHost({ store, continuity: "refresh", relics: [relic] });
  try {
    return await host.call(relic.name, "call_tool", { tool: "whoami", arguments: {} });
  } finally {
    await host.close();
  }
}

describe("MCP OAuth across sessions", () => {
  it("signs in once, then refreshes a revoked access token without signing in again", async () => {
    expect(await callOnce()).toMatchObject({ content: [{ text: "an authorized client" }] });
    expect(seen).toMatchObject({ authorize: 1, codeGrants: 1, refreshGrants: 0 });

    const file = openMcpOAuthStore(join(dir, "mcp-oauth"), "guarded", `${base}/mcp`).path;
    const first = (JSON.parse(readFileSync(file, "utf8")) as { tokens: { access_token: string } })
      .tokens.access_token;
    valid.delete(first);

    expect(await callOnce()).toMatchObject({ content: [{ text: "an authorized client" }] });
    expect(seen).toMatchObject({ authorize: 1, codeGrants: 1, refreshGrants: 1 });
    const second = (JSON.parse(readFileSync(file, "utf8")) as { tokens: { access_token: string } })
      .tokens.access_token;
    expect(second).not.toBe(first);
    expect(valid.has(second)).toBe(true);
  });

  it("fails a session's call with relic.mcp.unauthorized when signing in needs a person", async () => {
    // The sign-in is met at start (the handshake gets 401): the host's start failure carries it.
    approveAtOnce = false;
    try {
      const failure = await callOnce("fresh").then(
        () => undefined,
        (error: unknown) => error as { code?: string; message: string; cause?: { code?: string } },
      );
      expect(failure?.code).toBe("relic.start-failed");
      expect(failure?.cause?.code).toBe("relic.mcp.unauthorized");
      expect(failure?.message).toContain('MCP server "guarded" needs a person to sign in');
      expect(failure?.message).toContain("spool mcp login guarded");
    } finally {
      approveAtOnce = true;
    }
  });
});
