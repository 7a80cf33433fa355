import { ErrorCode, McpError as SdkError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ArtifactStore } from "../log/index.js";
import type { Relic, RelicDescription } from "../relics/index.js";
import { describeError } from "../spec/index.js";
import type { McpServerConfig } from "./mcp-config.js";
import {
  listConnectionTools,
  type McpConnection,
  type McpConnectOptions,
  type McpToolInfo,
  openMcpConnection,
  withAuthorization,
} from "./mcp-connection.js";
import { type ElicitationAnswer, loggableContent } from "./mcp-elicitation.js";
import { McpError } from "./mcp-error.js";
import { type McpCallResult, mcpCallResult } from "./mcp-result.js";

/** The relic of one MCP server, and how it is named. */
export interface McpRelic extends Relic {
  readonly server: McpServerConfig;
  /** The transport of the live connection, when one is open. */
  transport(): McpConnection["transport"] | undefined;
}

export type { McpToolInfo };

/** The relic name of server `name`: `mcp-<name in lowercase>` (`mcp-everything`). */
export function mcpRelicName(name: string): string {
  return `mcp-${name.toLowerCase()}`;
}

const METHODS: RelicDescription["methods"] = {
  list_tools: {
    description: "The server's tools with their argument schemas.",
    parameters: z.strictObject({}),
  },
  call_tool: {
    description: "Calls one of the server's tools with its arguments.",
    parameters: z.strictObject({
      tool: z.string().min(1),
      arguments: z.record(z.string(), z.unknown()).default({}),
    }),
  },
  list_resources: {
    description: "The server's resources (uri, name, description, mime type).",
    parameters: z.strictObject({ cursor: z.string().optional() }),
  },
  read_resource: {
    description: "Reads one resource of the server by uri (text, or binary stored as an artifact).",
    parameters: z.strictObject({ uri: z.string().min(1) }),
  },
};

/**
 * The relic of one MCP server. `start` connects (spawning a stdio server) and completes the
 * handshake; `stop` closes the connection (killing a stdio server). Methods: `list_tools`,
 * `call_tool` ({tool, arguments}: the tool's result, images and binary resources stored as
 * artifacts), `list_resources`, `read_resource` ({uri}).
 *
 * Failures are `McpError`s: a tool that reports `isError` fails with `relic.mcp.tool-error`
 * and its text; a request with no answer within the server's `timeout` with `relic.mcp.timeout`;
 * an aborted one with `relic.mcp.cancelled`. When the server has gone away (its process exited)
 * a call fails with the fatal `relic.mcp.crashed` (`details.during_call` says whether it died
 * during this very call), so the host stops the relic and starts it again on the next call.
 * Progress notifications reach the call's `progress` as `{progress, total?, message?}`.
 *
 * The server's `elicitation/create` requests are answered by its `elicitation` policy
 * (`answerElicitation`), each logged as `mcp.elicitation-answered` before the answer is sent.
 * An HTTP server that asks for OAuth is signed in to (`createMcpOAuth`) and the request sent
 * again; a sign-in that fails is `relic.mcp.unauthorized`.
 */
export function createMcpRelic(
  server: McpServerConfig,
  options: { fetch?: typeof fetch; oauth?: McpConnectOptions["oauth"] } = {},
): McpRelic {
  const name = mcpRelicName(server.name);
  let connection: McpConnection | undefined;
  let artifacts: ArtifactStore | undefined;
  let crash: string | undefined;
  const crashed = (duringCall: boolean) =>
    new McpError(
      "relic.mcp.crashed",
      `MCP server "${server.name}" went away${duringCall ? " during the call" : ""}: ${crash ?? "the connection closed"}`,
      {
        fatal: true,
        retryable: true,
        hint: duringCall
          ? "It is restarted on the next call; the call may or may not have had its effect, so check before repeating it"
          : "It is restarted on the next call",
        details: { server: server.name, during_call: duringCall },
      },
    );
  const request = async <T>(
    what: string,
    signal: AbortSignal,
    progress: ((data: unknown) => void) | undefined,
    send: (live: McpConnection, requestOptions: Record<string, unknown>) => Promise<T>,
  ): Promise<T> => {
    const live = connection;
    if (!live || live.closed) throw crashed(false);
    const requestOptions = {
      signal,
      timeout: server.timeoutSeconds * 1000,
      ...(progress
        ? {
            resetTimeoutOnProgress: true,
            onprogress: (update: { progress: number; total?: number; message?: string }) =>
              progress({
                progress: update.progress,
                ...(update.total !== undefined ? { total: update.total } : {}),
                ...(update.message !== undefined ? { message: update.message } : {}),
              }),
          }
        : {}),
    };
    try {
      return await withAuthorization(server, live, () => send(live, requestOptions));
    } catch (error) {
      throw translate(error, what, live, signal, server, () => crashed(true));
    }
  };
  return {
    name,
    server,
    transport: () => (connection && !connection.closed ? connection.transport : undefined),
    describe: () => ({
      description: `The MCP server "${server.name}" (${server.file}).`,
      methods: METHODS,
    }),
    async start(context) {
      artifacts = context.store.artifacts;
      crash = undefined;
      const logElicitation = async (answer: ElicitationAnswer) => {
        await context.store.append({
          continuity: context.continuity,
          type: "mcp.elicitation-answered",
          data: {
            server: server.name,
            mode: answer.request.mode,
            message: answer.request.message,
            fields: answer.request.fields.slice(0, 200).map((field) => field.slice(0, 200)),
            action: answer.action,
            ...(answer.content ? { content: loggableContent(answer.content) } : {}),
            ...(answer.decline ? { reason: answer.decline } : {}),
          },
        });
      };
      connection = await openMcpConnection(server, {
        onClose: (reason) => {
          crash = reason;
        },
        onElicitation: logElicitation,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.oauth ? { oauth: options.oauth } : {}),
      });
    },
    async call(method, parameters, signal, progress) {
      const params = parameters as Record<string, unknown>;
      switch (method) {
        case "list_tools":
          return {
            tools: await request("tools/list", signal, undefined, (live, requestOptions) =>
              listConnectionTools(server, live, requestOptions),
            ),
          };
        case "call_tool": {
          const tool = params.tool as string;
          const result = await request(`tool "${tool}"`, signal, progress, (live, requestOptions) =>
            live.client.callTool(
              { name: tool, arguments: params.arguments as Record<string, unknown> },
              undefined,
              requestOptions,
            ),
          );
          return toolResult(server.name, tool, await mcpCallResult(result, artifacts!));
        }
        case "list_resources":
          return request("resources/list", signal, undefined, (live, requestOptions) =>
            live.client.listResources(
              params.cursor !== undefined ? { cursor: params.cursor as string } : {},
              requestOptions,
            ),
          );
        case "read_resource": {
          const read = await request("resources/read", signal, undefined, (live, requestOptions) =>
            live.client.readResource({ uri: params.uri as string }, requestOptions),
          );
          return mcpCallResult({ content: read.contents.map(asEmbedded) }, artifacts!);
        }
        default:
          throw new McpError("relic.mcp.request-failed", `no method "${method}"`, {});
      }
    },
    async stop() {
      const closing = connection;
      connection = undefined;
      await closing?.close();
    },
  };
}

function asEmbedded(resource: Record<string, unknown>): Record<string, unknown> {
  return { type: "resource", resource };
}

function toolResult(server: string, tool: string, result: McpCallResult): McpCallResult {
  if (!result.isError) {
    const { isError: _ignored, ...rest } = result;
    return rest;
  }
  const text = result.content
    .map((part) => (typeof part.text === "string" ? part.text : ""))
    .join("\n")
    .trim();
  throw new McpError(
    "relic.mcp.tool-error",
    `tool "${tool}" of MCP server "${server}" failed: ${text.slice(0, 4000) || "(it gave no message)"}`,
    { hint: "Read the message, fix the arguments, and call it again", details: { server, tool } },
  );
}

function translate(
  error: unknown,
  what: string,
  live: McpConnection,
  signal: AbortSignal,
  server: McpServerConfig,
  crashed: () => McpError,
): unknown {
  if (error instanceof McpError) return error;
  if (signal.aborted) {
    return new McpError(
      "relic.mcp.cancelled",
      `${what} of MCP server "${server.name}" was stopped: the action timed out or was cancelled`,
      {
        retryable: true,
        hint: "Run it again, with a longer timeout",
        details: { server: server.name },
      },
    );
  }
  const code = error instanceof SdkError ? error.code : undefined;
  if (live.closed || code === ErrorCode.ConnectionClosed) return crashed();
  if (code === ErrorCode.RequestTimeout) {
    return new McpError(
      "relic.mcp.timeout",
      `MCP server "${server.name}" did not answer ${what} within ${server.timeoutSeconds} s`,
      {
        retryable: true,
        hint: `Try again later, or raise "timeout" (seconds) for "${server.name}" in ${server.file}`,
        details: { server: server.name },
      },
    );
  }
  return new McpError(
    "relic.mcp.request-failed",
    `MCP server "${server.name}" refused ${what}: ${describeError(error)}`,
    { hint: "Check the arguments against the tool's schema", details: { server: server.name } },
  );
}
