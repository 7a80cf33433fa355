import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import { describeError } from "../spec/index.js";
import type { McpServerConfig } from "./mcp-config.js";
import { answerElicitation, type ElicitationAnswer } from "./mcp-elicitation.js";
import { McpError } from "./mcp-error.js";
import {
  createMcpOAuth,
  MCP_MAX_AUTHORIZATIONS,
  type McpOAuth,
  type McpOAuthOptions,
} from "./mcp-oauth.js";

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
  /**
   * Completes the sign-in the SDK started when a request met 401 or 403 (insufficient scope)
   * and threw `UnauthorizedError`: exchanges the authorization code for tokens, so the request
   * can be sent again. Rejects with `McpError` (`relic.mcp.unauthorized`).
   */
  completeAuthorization(): Promise<void>;
}

/** Options of `openMcpConnection`. */
export interface McpConnectOptions {
  /** Called once when the transport closes on its own (not after `close`). */
  onClose?: (reason: string) => void;
  /** Seconds the handshake may take (default the server's `timeoutSeconds`). */
  timeoutSeconds?: number;
  /** `fetch` for HTTP servers (default the global one). */
  fetch?: typeof fetch;
  /**
   * Called with each `elicitation/create` request's answer before it is sent (the relic logs
   * it as `mcp.elicitation-answered`); a rejection fails the server's request instead.
   */
  onElicitation?: (answer: ElicitationAnswer) => Promise<void>;
  /** How an OAuth sign-in that needs a person reaches one (see `createMcpOAuth`). */
  oauth?: Omit<McpOAuthOptions, "fetch">;
}

/** `elicitation/create` as the protocol delivers it: Spool reads and checks `params` itself. */
const elicitRequest = z.object({ method: z.literal("elicitation/create"), params: z.unknown() });

/**
 * Connects to `server` with the official SDK client and completes the MCP handshake. A stdio
 * server is spawned with the SDK's default safe environment plus its `env`; its stderr is kept
 * (the tail) instead of reaching the terminal. An `http` server is tried with Streamable HTTP
 * first and, when that fails with an HTTP 4xx (a server that only speaks the 2024 SSE
 * transport), with SSE; an `sse` server with SSE only.
 *
 * An HTTP server that answers 401 is signed in to when it has OAuth (`createMcpOAuth`), and
 * the handshake made again; its elicitation requests (any transport) are answered by its
 * policy (`answerElicitation`), each passed to `onElicitation` before the answer is sent.
 *
 * Rejects with `McpError` (`relic.mcp.connect-failed`, or `relic.mcp.unauthorized` when the
 * sign-in failed) saying what failed; the message never holds header or environment values,
 * tokens or secrets.
 */
export async function openMcpConnection(
  server: McpServerConfig,
  options: McpConnectOptions = {},
): Promise<McpConnection> {
  const timeout = (options.timeoutSeconds ?? server.timeoutSeconds) * 1000;
  let stderr = "";
  let oauth: McpOAuth | undefined;
  const attempt = async (transport: Transport, kind: McpConnection["transport"]) => {
    // Per attempt: a Streamable HTTP attempt that failed closes, and that is no crash.
    let closed = false;
    let closing = false;
    const client = newClient(server, options);
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
      completeAuthorization: () => finishAuthorization(server, oauth, transport),
    };
    return connection;
  };
  /** Connects, signing in (at most `MCP_MAX_AUTHORIZATIONS` times) when the server answers 401. */
  const authorized = async (make: () => Transport, kind: McpConnection["transport"]) => {
    for (let round = 0; ; round++) {
      const transport = make();
      try {
        return await attempt(transport, kind);
      } catch (error) {
        if (!(error instanceof UnauthorizedError) || round >= MCP_MAX_AUTHORIZATIONS) throw error;
        await finishAuthorization(server, oauth, transport);
      }
    }
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
    const fetchOption = options.fetch ? { fetch: options.fetch } : {};
    if (server.oauth) {
      const oauthServer = { ...server, oauth: server.oauth };
      oauth = await createMcpOAuth(oauthServer, { ...options.oauth, ...fetchOption });
    }
    const transportOptions = {
      requestInit: { headers: server.headers },
      ...fetchOption,
      ...(oauth ? { authProvider: oauth.provider } : {}),
    };
    if (server.transport === "http") {
      try {
        const make = () => new StreamableHTTPClientTransport(url, transportOptions);
        return await authorized(make, "streamable-http");
      } catch (error) {
        if (!isClientHttpError(error)) throw error;
      }
    }
    return await authorized(() => new SSEClientTransport(url, transportOptions), "sse");
  } catch (error) {
    throw connectFailure(server, error, stderr);
  }
}

/**
 * The SDK client Spool connects with: form-mode elicitation declared (URL mode needs a person
 * at a browser), each request answered by the server's policy and reported to `onElicitation`
 * before the answer is sent.
 */
function newClient(server: McpServerConfig, options: McpConnectOptions): Client {
  const client = new Client(MCP_CLIENT_INFO, { capabilities: { elicitation: { form: {} } } });
  // Through Protocol's own registration, past Client's: Client's check rejects a malformed
  // request before any handler sees it, and Spool logs and declines those with the reason.
  Protocol.prototype.setRequestHandler.call(client, elicitRequest, async (request) => {
    const answer = answerElicitation(request.params, server.elicitation ?? "defaults");
    await options.onElicitation?.(answer);
    return answer.action === "accept"
      ? { action: "accept", content: answer.content }
      : { action: "decline" };
  });
  return client;
}

/** Exchanges the code of the sign-in the SDK started on `transport` for tokens. */
async function finishAuthorization(
  server: McpServerConfig,
  oauth: McpOAuth | undefined,
  transport: Transport,
): Promise<void> {
  if (
    !oauth ||
    !(transport instanceof StreamableHTTPClientTransport || transport instanceof SSEClientTransport)
  ) {
    throw new McpError(
      "relic.mcp.unauthorized",
      `MCP server "${server.name}" (${server.file}) asks for authorization, and OAuth is off for it`,
      {
        hint: 'Remove "oauth": false (and any Authorization header) so Spool signs in, or give a valid token',
        details: { server: server.name },
      },
    );
  }
  await transport.finishAuth(await oauth.takeAuthorizationCode());
}

/** `error` of a failed connection as a typed `McpError` that holds no header or env value. */
function connectFailure(server: McpServerConfig, error: unknown, stderr: string): McpError {
  if (error instanceof McpError) return error;
  if (isAuthorizationError(error)) return unauthorized(server, error);
  const tail = stderr.trim();
  return new McpError(
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

/**
 * Runs `send` on `connection`; when the server asks for authorization mid-session (401, or 403
 * for a scope the token lacks) and the SDK started a sign-in, completes it and sends again, at
 * most `MCP_MAX_AUTHORIZATIONS` times. Rejects with `McpError` (`relic.mcp.unauthorized`) when
 * the sign-in fails or the server keeps refusing; other failures pass through unchanged.
 */
export async function withAuthorization<T>(
  server: McpServerConfig,
  connection: McpConnection,
  send: () => Promise<T>,
): Promise<T> {
  for (let round = 0; ; round++) {
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      if (round >= MCP_MAX_AUTHORIZATIONS) throw unauthorized(server, error);
      await connection.completeAuthorization();
    }
  }
}

/** True for the SDK's OAuth failures (an unfinished sign-in, an authorization server's error). */
function isAuthorizationError(error: unknown): boolean {
  return error instanceof UnauthorizedError || error instanceof OAuthError;
}

function unauthorized(server: McpServerConfig, error: unknown): McpError {
  return new McpError(
    "relic.mcp.unauthorized",
    `MCP server "${server.name}" (${server.file}) did not accept Spool's authorization: ${describeError(error)}`,
    {
      cause: error,
      hint: `Sign in again with \`spool mcp login ${server.name}\`, or check its "oauth" settings`,
      details: { server: server.name },
    },
  );
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

/**
 * Every tool `connection`'s server lists (all pages), with `requestOptions` on each request,
 * signing in when the server asks (`withAuthorization`).
 */
export async function listConnectionTools(
  server: McpServerConfig,
  connection: McpConnection,
  requestOptions: Record<string, unknown>,
): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const params = cursor ? { cursor } : {};
    const page = await withAuthorization(server, connection, () =>
      connection.client.request({ method: "tools/list", params }, toolsPage, requestOptions),
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
