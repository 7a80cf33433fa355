import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import { describeError } from "../spec/index.js";
import type { McpServerConfig } from "./mcp-config.js";
import { McpError } from "./mcp-error.js";

/** The name and version Spool gives in `initialize`. */
export const MCP_CLIENT_INFO = { name: "spool", version: "0.1.0" } as const;

/** The most stderr a connection keeps (its tail), for messages about a crash. */
const STDERR_TAIL = 2000;

/** A live connection to one MCP server. */
export interface McpConnection {
  readonly client: Client;
  /** `stdio`, `streamable-http` or `sse`: the transport in use. */
  readonly transport: "stdio" | "streamable-http" | "sse";
  /** True once the transport closed (the process exited, the server went away, or `close`). */
  readonly closed: boolean;
  /** The last lines the server wrote to stderr (stdio only; empty otherwise). */
  stderrTail(): string;
  /** Closes the transport (kills a stdio server). Never rejects. */
  close(): Promise<void>;
}

/** Options of `openMcpConnection`. */
export interface McpConnectOptions {
  /** Called once when the transport closes on its own (not after `close`). */
  onClose?: (reason: string) => void;
  /** Seconds the handshake may take (default the server's `timeoutSeconds`). */
  timeoutSeconds?: number;
  /** `fetch` for HTTP servers (default the global one). */
  fetch?: typeof fetch;
}

/**
 * Connects to `server` with the official SDK client and completes the MCP handshake. A stdio
 * server is spawned with the SDK's default safe environment plus its `env`; its stderr is kept
 * (the tail) instead of reaching the terminal. An `http` server is tried with Streamable HTTP
 * first and, when that fails with an HTTP 4xx (a server that only speaks the 2024 SSE
 * transport), with SSE; an `sse` server with SSE only.
 *
 * Rejects with `McpError` (`relic.mcp.connect-failed`) saying what failed; the message never
 * holds header or environment values.
 */
export async function openMcpConnection(
  server: McpServerConfig,
  options: McpConnectOptions = {},
): Promise<McpConnection> {
  const timeout = (options.timeoutSeconds ?? server.timeoutSeconds) * 1000;
  let stderr = "";
  const attempt = async (transport: Transport, kind: McpConnection["transport"]) => {
    // Per attempt: a Streamable HTTP attempt that failed closes, and that is no crash.
    let closed = false;
    let closing = false;
    const client = new Client(MCP_CLIENT_INFO, { capabilities: {} });
    client.onclose = () => {
      closed = true;
      if (!closing) options.onClose?.(closeReason(kind, stderr));
    };
    client.onerror = () => {
      // Transport errors surface through the request that meets them or through onclose.
    };
    try {
      await client.connect(transport, { timeout });
    } catch (error) {
      closing = true;
      await client.close().catch(() => undefined);
      throw error;
    }
    const connection: McpConnection = {
      client,
      transport: kind,
      get closed() {
        return closed;
      },
      stderrTail: () => stderr,
      async close() {
        closing = true;
        await client.close().catch(() => undefined);
      },
    };
    return connection;
  };
  try {
    if (server.transport === "stdio") {
      const transport = new StdioClientTransport({
        command: server.command,
        args: server.args,
        env: { ...getDefaultEnvironment(), ...server.env },
        ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
        stderr: "pipe",
      });
      transport.stderr?.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
      });
      return await attempt(transport, "stdio");
    }
    const url = new URL(server.url);
    const requestInit = { headers: server.headers };
    const fetchOption = options.fetch ? { fetch: options.fetch } : {};
    if (server.transport === "http") {
      try {
        return await attempt(
          new StreamableHTTPClientTransport(url, { requestInit, ...fetchOption }),
          "streamable-http",
        );
      } catch (error) {
        if (!isClientHttpError(error)) throw error;
      }
    }
    return await attempt(new SSEClientTransport(url, { requestInit, ...fetchOption }), "sse");
  } catch (error) {
    const tail = stderr.trim();
    throw new McpError(
      "relic.mcp.connect-failed",
      `MCP server "${server.name}" (${server.file}) could not be reached: ${describeError(error)}${tail ? `; its stderr ends: ${lastLine(tail)}` : ""}`,
      {
        cause: error,
        retryable: true,
        hint:
          server.transport === "stdio"
            ? `Check that "${server.command}" runs and speaks MCP on stdio`
            : "Check the URL and that the server is up",
        details: { server: server.name },
      },
    );
  }
}

function isClientHttpError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" && code >= 400 && code < 500;
}

function closeReason(kind: McpConnection["transport"], stderr: string): string {
  const tail = stderr.trim();
  const base = kind === "stdio" ? "the server process exited" : "the server closed the connection";
  return tail ? `${base}; its stderr ends: ${lastLine(tail)}` : base;
}

function lastLine(text: string): string {
  return (
    text
      .split(/\r?\n/)
      .filter((line) => line.trim() !== "")
      .at(-1) ?? ""
  ).slice(0, 500);
}

/** One tool as a server lists it: its name, description and JSON Schema of its arguments. */
export interface McpToolInfo {
  name: string;
  description: string;
  /** The `inputSchema` as the server sent it. */
  inputSchema: Record<string, unknown>;
  /** The server's hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`, …), when given. */
  annotations?: Record<string, unknown>;
}

/**
 * A `tools/list` page read leniently: one tool with an invalid schema must not lose the others
 * (the SDK's own `listTools` rejects the whole page), so each tool is checked by `mcpServerTools`.
 */
const toolsPage = z.looseObject({
  tools: z.array(
    z.looseObject({
      name: z.string(),
      title: z.string().nullish(),
      description: z.string().nullish(),
      inputSchema: z.unknown(),
      annotations: z.record(z.string(), z.unknown()).nullish(),
    }),
  ),
  nextCursor: z.string().nullish(),
});

/** Every tool `connection`'s server lists (all pages), with `requestOptions` on each request. */
export async function listConnectionTools(
  connection: McpConnection,
  requestOptions: Record<string, unknown>,
): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await connection.client.request(
      { method: "tools/list", params: cursor ? { cursor } : {} },
      toolsPage,
      requestOptions,
    );
    for (const tool of page.tools) {
      tools.push({
        name: tool.name,
        description: tool.description ?? tool.title ?? "",
        inputSchema: (tool.inputSchema ?? null) as Record<string, unknown>,
        ...(tool.annotations ? { annotations: { ...tool.annotations } } : {}),
      });
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return tools;
}
