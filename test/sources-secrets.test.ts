// biome-ignore-all lint/suspicious/noTemplateCurlyInString: source manifests write ${ENV} references in plain strings
/**
 * Credentials of a source stay out of the log: a manifest must name them as `${NAME}` (a literal
 * one in a header, a URL's password or a secret-named query parameter is a manifest error that
 * says so), the runtime expands them only when it opens a source the manifest declares, and a
 * source the model adds is never expanded (it could otherwise send a credential to a host of its
 * choosing). Over a real loopback HTTP server and the real http adapter.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createScriptedProvider } from "../src/providers/index.js";
import type { RuntimeSources } from "../src/runtime/index.js";
import { DEFAULT_SOURCE_ADAPTERS, parseSourceManifest } from "../src/sources/index.js";
import { ConfigError } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { untilLogged } from "./support/memory-sources.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-sources-secrets-");
const TOKEN = "s3cr3t-token-value-0123456789";
let server: Server | undefined;
let workspace: string | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe("source credentials", () => {
  it("refuse a literal secret in a manifest, naming the field and the ${NAME} to write", () => {
    let error: unknown;
    try {
      parseSourceManifest({
        sources: [
          {
            id: "feed",
            kind: "http",
            target: "https://api.example.com/v1/events?api_key=abc123&page=2",
            options: { headers: { Authorization: "Bearer abc123", Accept: "text/plain" } },
          },
          { id: "feed2", kind: "sse", target: "https://user:hunter2@stream.example.com/" },
        ],
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).details.issues as { path: string; message: string }[];
    const messages = issues.map((issue) => `${issue.path}: ${issue.message}`).join("\n");
    expect(messages).toContain("the query parameter api_key holds a literal secret");
    expect(messages).toContain("${SOURCE_API_KEY}");
    expect(messages).toContain("the header Authorization holds a literal secret");
    expect(messages).toContain("the URL's password holds a literal secret");
    expect(messages).not.toContain("Accept");
    // Written as references, the same sources are accepted.
    expect(
      parseSourceManifest({
        sources: [
          {
            id: "feed",
            kind: "http",
            target: "https://api.example.com/v1/events?api_key=${API_KEY}",
            options: { headers: { Authorization: "Bearer ${API_TOKEN}" } },
          },
        ],
      }).definitions,
    ).toHaveLength(1);
  });

  it("expand a declared source's ${NAME} for the request only, never for one the model adds", async () => {
    const seen: { url: string; authorization: string | undefined }[] = [];
    server = createServer((request, response) => {
      seen.push({ url: request.url ?? "", authorization: request.headers.authorization });
      response.writeHead(200, { "content-type": "text/plain", etag: '"v1"' });
      response.end(`status ok for ${request.url}\n`);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    workspace = mkdtempSync(join(tmpdir(), "spool-secrets-ws-"));
    const sources: RuntimeSources = {
      manifest: parseSourceManifest({
        sources: [
          {
            id: "status",
            kind: "http",
            target: `http://127.0.0.1:${port}/declared`,
            options: { headers: { Authorization: "Bearer ${SRC_TOKEN}" }, interval_ms: 60_000 },
          },
        ],
        source_actions: { enabled: true, kinds: ["http"], allow_hosts: [`127.0.0.1:${port}`] },
      }),
      access: {
        workspace,
        allowPaths: [],
        allowHosts: [`127.0.0.1:${port}`],
        shell: false,
      },
      adapters: DEFAULT_SOURCE_ADAPTERS,
      env: { SRC_TOKEN: TOKEN },
    };
    const added = JSON.stringify({
      name: "source.add",
      parameters: {
        id: "sneaky",
        kind: "http",
        target: `http://127.0.0.1:${port}/added?to=\${SRC_TOKEN}`,
        options: { interval_ms: 60_000 },
      },
    });
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        `<action type="internal" mode="sync" id="a1">${added}</action><response final="false">added</response>`,
        "<response>noted</response>",
        "<response>noted</response>",
        "<response>noted</response>",
      ],
    });
    const runtime = longRunRuntime(temp.store, provider, { sources });
    try {
      await runtime.submit("secrets", { text: "watch", actor: "ada", origin: "test" });
      await untilLogged(temp.store, "secrets", 2, (event) => event.type === "source.chunk");
    } finally {
      await runtime.close();
    }
    const declared = seen.find((request) => request.url === "/declared");
    expect(declared?.authorization).toBe(`Bearer ${TOKEN}`);
    const sneaky = seen.find((request) => request.url.startsWith("/added"));
    expect(decodeURIComponent(sneaky?.url ?? "")).toBe("/added?to=${SRC_TOKEN}");
    const log = JSON.stringify(await readAll(temp.store, "secrets"));
    expect(log).toContain("Bearer ${SRC_TOKEN}");
    expect(log).not.toContain(TOKEN);
  });
});
