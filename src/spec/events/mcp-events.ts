import { z } from "zod";
import { defineEvent } from "./define-event.js";

const serverName = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, "must be an MCP server name");
const toolName = z.string().min(1).max(200);
const mcpStreams = ["continuity"] as const;

/**
 * MCP servers' tool lists: what an agent was offered from each server, recorded once so that
 * later sessions of the continuity, and its replay, offer the same tools without reaching the
 * server. Server calls themselves are relic events (`relic.*`) and action results; a server's
 * requests back to Spool (elicitation) are logged with the answer Spool gave.
 */
export const mcpEvents = {
  "mcp.tools-listed": defineEvent({
    description:
      "An MCP server's tools were listed (name, description, argument schema), under the fingerprint of its configuration.",
    criticality: "critical",
    streams: mcpStreams,
    schema: z.strictObject({
      server: serverName,
      /** The digest of the server's command, args or url: a changed configuration lists again. */
      fingerprint: z.string().min(1).max(64),
      tools: z.array(
        z.strictObject({
          name: toolName,
          description: z.string().max(20_000),
          /** As the server sent it (refused tools' invalid schemas included). */
          input_schema: z.unknown(),
          annotations: z.record(z.string(), z.unknown()).optional(),
        }),
      ),
    }),
  }),
  "mcp.tool-refused": defineEvent({
    description:
      "A tool an MCP server listed was not offered to the model (a bad name or an unusable schema); the server's other tools were.",
    criticality: "critical",
    streams: mcpStreams,
    schema: z.strictObject({
      server: serverName,
      tool: toolName,
      reason: z.string().min(1).max(2000),
    }),
  }),
  "mcp.elicitation-answered": defineEvent({
    description:
      "An MCP server asked for input (elicitation/create) and Spool answered by the server's policy, before the answer was sent.",
    criticality: "critical",
    streams: mcpStreams,
    schema: z.strictObject({
      server: serverName,
      /** `form`, `url`, or `unknown` for a request that could not be read. */
      mode: z.string().min(1).max(40),
      message: z.string().max(2000),
      /** The requested schema's field names (empty when it could not be read). */
      fields: z.array(z.string().max(200)).max(200),
      action: z.enum(["accept", "decline", "cancel"]),
      /** With `accept`: the values sent (secret-looking fields' values redacted). */
      content: z.record(z.string(), z.unknown()).optional(),
      /** With `decline`: why (`elicitation.policy-decline`, `elicitation.invalid-request`, …). */
      reason: z
        .strictObject({ code: z.string().min(1).max(100), message: z.string().max(2000) })
        .optional(),
    }),
  }),
};
