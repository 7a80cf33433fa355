import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { describeError } from "../spec/index.js";
import { MCP_CLIENT_INFO } from "./mcp-connection.js";

/** One message of a continuity's conversation, as `read_conversation` returns it. */
export interface ConversationMessage {
  role: "user" | "assistant";
  /** Who said it: the actor of a turn, the directive of a response. */
  by: string;
  text: string;
  ts: string;
}

/** What `send_turn` answers: how the run ended and the agent's final response. */
export interface TurnAnswerText {
  status: string;
  response: string;
}

/** What a Spool MCP server does; the CLI passes the real runtime, tests what they need. */
export interface SpoolMcpServerOptions {
  /** Runs `text` as a turn on `continuity` (an id or a name) and resolves with the answer. */
  sendTurn(continuity: string, text: string, signal: AbortSignal): Promise<TurnAnswerText>;
  /** The newest `limit` messages of `continuity`, oldest first. */
  readConversation(continuity: string, limit: number): Promise<ConversationMessage[]>;
  /**
   * Searches the memory index (summaries and pins across continuities); `search_memory` is
   * offered only when this is given.
   */
  searchMemory?(query: string, limit: number): Promise<unknown>;
}

/**
 * Spool as an MCP server (`spool mcp serve`), built with the SDK's `McpServer`: tools
 * `send_turn` ({continuity, text}: runs the agent on the continuity and returns its response),
 * `read_conversation` ({continuity, limit?}: its recent messages) and, when `searchMemory` is
 * given, `search_memory` ({query, limit?}). A failure is a tool result with `isError` and the
 * message (never a protocol error), so a client shows it to its model. Connect it to a
 * transport (`server.connect(new StdioServerTransport())`).
 */
export function createSpoolMcpServer(options: SpoolMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: "spool", version: MCP_CLIENT_INFO.version },
    {
      instructions:
        "Spool runs long-lived agents, each on a continuity (one chat forever). Send a turn to a continuity to have its agent work on it; read its conversation to see what happened.",
    },
  );
  server.registerTool(
    "send_turn",
    {
      description:
        "Sends a message to a Spool continuity (by id or name), runs its agent on it, and returns the agent's final response.",
      inputSchema: {
        continuity: z.string().min(1).describe("The continuity's id or name"),
        text: z.string().min(1).describe("The message to send"),
      },
    },
    async ({ continuity, text }, extra) =>
      answer(async () => {
        const result = await options.sendTurn(continuity, text, extra.signal);
        return `${result.response}${result.status === "completed" ? "" : `\n\n[the run ended: ${result.status}]`}`;
      }),
  );
  server.registerTool(
    "read_conversation",
    {
      description:
        "The recent messages of a Spool continuity (turns and the agent's responses), oldest first.",
      inputSchema: {
        continuity: z.string().min(1).describe("The continuity's id or name"),
        limit: z.number().int().min(1).max(200).default(20).describe("How many messages"),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ continuity, limit }) =>
      answer(async () => {
        const messages = await options.readConversation(continuity, limit);
        if (messages.length === 0) return "(no messages yet)";
        return messages.map((m) => `[${m.ts}] ${m.role} (${m.by}): ${m.text}`).join("\n\n");
      }),
  );
  const search = options.searchMemory;
  if (search) {
    server.registerTool(
      "search_memory",
      {
        description:
          "Searches Spool's memory (summaries and pinned facts across continuities) for a query.",
        inputSchema: {
          query: z.string().min(1),
          limit: z.number().int().min(1).max(50).default(10),
        },
        annotations: { readOnlyHint: true },
      },
      async ({ query, limit }) =>
        answer(async () => JSON.stringify(await search(query, limit), null, 2)),
    );
  }
  return server;
}

async function answer(
  work: () => Promise<string>,
): Promise<{ content: { type: "text"; text: string }[]; isError?: boolean }> {
  try {
    return { content: [{ type: "text", text: await work() }] };
  } catch (error) {
    return { content: [{ type: "text", text: describeError(error) }], isError: true };
  }
}
