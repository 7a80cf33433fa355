/**
 * MCP servers from npm through the relic host, over each transport: server-everything over
 * Streamable HTTP (tools, progress, an error) and over SSE (reached by falling back from
 * Streamable HTTP), server-filesystem and server-memory over stdio. All on loopback.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createMcpRelic, type McpServerConfig } from "../src/mcp/index.js";
import { createRelicHost, type RelicHost } from "../src/relics/index.js";
import { EVERYTHING, serverScript } from "./support/mcp-servers.js";
import { tempStore } from "./support/transcripts.js";

let store: EventStore;
let cleanup: () => Promise<void>;
let dir: string;
const children: ChildProcess[] = [];
let host: RelicHost | undefined;

beforeAll(async () => {
  ({ store, cleanup } = await tempStore("spool-mcp-transports-"));
  dir = mkdtempSync(join(tmpdir(), "spool-mcp-files-"));
});
afterEach(async () => {
  await host?.close();
  host = undefined;
});
afterAll(async () => {
  for (const child of children) child.kill();
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Starts server-everything in `mode` on a free loopback port; resolves once it listens. */
async function everythingOverHttp(mode: "streamableHttp" | "sse"): Promise<number> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (/port/i.test(seen)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${seen}`)));
  });
  return port;
}

const base = { file: ".ai/mcp.json", timeoutSeconds: 30, fingerprint: "test" };

function hostOf(server: McpServerConfig) {
  const relic = createMcpRelic(server);
  host = createRelicHost({ store, continuity: "transports", relics: [relic] });
  return {
    relic,
    call: (method: string, parameters: object, progress?: (data: unknown) => void) =>
      host!.call(relic.name, method, parameters, progress ? { progress } : {}),
  };
}

describe("MCP servers over each transport", () => {
  it("calls server-everything over Streamable HTTP, with progress and a tool error", async () => {
    const port = await everythingOverHttp("streamableHttp");
    const { relic, call } = hostOf({
      ...base,
      name: "everything",
      transport: "http",
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { Authorization: "Bearer not-a-real-token" },
    });
    const listed = (await call("list_tools", {})) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name)).toContain("get-sum");
    expect(relic.transport()).toBe("streamable-http");
    expect(await call("call_tool", { tool: "get-sum", arguments: { a: 40, b: 2 } })).toMatchObject({
      content: [{ type: "text", text: expect.stringContaining("42") }],
    });
    const progress: unknown[] = [];
    await call(
      "call_tool",
      { tool: "trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } },
      (data) => progress.push(data),
    );
    expect(progress).toEqual(
      [
        { progress: 1, total: 2, message: expect.any(String) },
        { progress: 2, total: 2, message: expect.any(String) },
      ].map((item) => expect.objectContaining({ progress: item.progress, total: 2 })),
    );
    await expect(
      call("call_tool", { tool: "get-resource-reference", arguments: { resourceId: 1.5 } }),
    ).rejects.toMatchObject({ code: "relic.mcp.tool-error" });
  });

  it("falls back to SSE when the server does not speak Streamable HTTP", async () => {
    const port = await everythingOverHttp("sse");
    const { relic, call } = hostOf({
      ...base,
      name: "legacy",
      transport: "http",
      url: `http://127.0.0.1:${port}/sse`,
      headers: {},
    });
    expect(
      await call("call_tool", { tool: "echo", arguments: { message: "over sse" } }),
    ).toMatchObject({
      content: [{ text: expect.stringContaining("over sse") }],
    });
    expect(relic.transport()).toBe("sse");
  });

  it("reads and writes files with server-filesystem, and keeps a graph with server-memory", async () => {
    writeFileSync(join(dir, "hello.txt"), "hello from the workspace\n");
    const files = hostOf({
      ...base,
      name: "filesystem",
      transport: "stdio",
      command: process.execPath,
      args: [serverScript("@modelcontextprotocol/server-filesystem"), dir],
      env: {},
    });
    const read = await files.call("call_tool", {
      tool: "read_text_file",
      arguments: { path: join(dir, "hello.txt") },
    });
    expect(read).toMatchObject({ content: [{ text: "hello from the workspace\n" }] });
    await expect(
      files.call("call_tool", { tool: "read_text_file", arguments: { path: "/etc/passwd" } }),
    ).rejects.toMatchObject({ code: "relic.mcp.tool-error" });
    await host!.close();

    const memory = hostOf({
      ...base,
      name: "memory",
      transport: "stdio",
      command: process.execPath,
      args: [serverScript("@modelcontextprotocol/server-memory")],
      env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
    });
    await memory.call("call_tool", {
      tool: "create_entities",
      arguments: {
        entities: [{ name: "Ada", entityType: "person", observations: ["wrote notes"] }],
      },
    });
    const graph = (await memory.call("call_tool", { tool: "read_graph", arguments: {} })) as {
      content: { text: string }[];
    };
    expect(graph.content[0]!.text).toContain("wrote notes");
  });
});
