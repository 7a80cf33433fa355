import type { EventStore } from "../log/index.js";
import { type AnyNewEvent, canonicalJson, type EventOf, isEvent } from "../spec/index.js";
import type { McpServerConfig } from "./mcp-config.js";
import {
  listConnectionTools,
  type McpConnectOptions,
  type McpToolInfo,
  openMcpConnection,
} from "./mcp-connection.js";
import { mcpServerTools } from "./mcp-tools.js";

/** Tools made only to learn which are refused are never called. */
const refuseCalls = () => Promise.reject(new Error("not callable"));

/** The tools of each server an agent is offered, by server name. */
export type McpListings = ReadonlyMap<string, readonly McpToolInfo[]>;

/** Options of `resolveMcpListings`. */
export interface McpListingOptions {
  servers: readonly McpServerConfig[];
  store: EventStore;
  continuity: string;
  /**
   * Connect to a server whose tools the log has not recorded (under its current fingerprint),
   * list them and append `mcp.tools-listed`. False for replay: such a server offers no tools.
   */
  discover: boolean;
  fetch?: typeof fetch;
}

/**
 * The tools of each of `servers` for the continuity: the newest `mcp.tools-listed` the log has
 * for the server under its configuration's fingerprint, so later sessions and replay offer what
 * the first session was offered without reaching the server. With `discover`, a server without
 * one is connected to once, its tools listed, and the connection closed (the
 * server's relic starts it again on the first call). A server that cannot be reached then offers
 * no tools and is reported in `failed` (its error's message); nothing is recorded for it, so the
 * next session tries again. The events that record new lists (`mcp.tools-listed`, and
 * `mcp.tool-refused` for each refused tool) are returned in `records`, not appended: the caller
 * appends them once the continuity exists (`recordMcpListings`).
 */
export async function resolveMcpListings(
  options: McpListingOptions,
): Promise<{ listings: McpListings; failed: Map<string, string>; records: AnyNewEvent[] }> {
  const recorded = new Map<string, EventOf<"mcp.tools-listed">>();
  if (options.servers.length > 0) {
    for await (const event of options.store.read({
      continuity: options.continuity,
      types: ["mcp.tools-listed"],
    })) {
      if (isEvent(event, "mcp.tools-listed"))
        recorded.set(`${event.data.server}\u0000${event.data.fingerprint}`, event);
    }
  }
  const listings = new Map<string, readonly McpToolInfo[]>();
  const failed = new Map<string, string>();
  const records: AnyNewEvent[] = [];
  for (const server of options.servers) {
    const found = recorded.get(`${server.name}\u0000${server.fingerprint}`);
    if (found) {
      listings.set(server.name, canonical(found.data.tools.map(fromEvent)));
      continue;
    }
    if (!options.discover) continue;
    try {
      // Keys in canonical order, as the log gives them back: a later session and replay build
      // the same schemas, and so the same prompt, from the recorded list.
      const tools = canonical(await listServerTools(server, options.fetch));
      records.push({
        continuity: options.continuity,
        type: "mcp.tools-listed",
        data: {
          server: server.name,
          fingerprint: server.fingerprint,
          tools: tools.map((tool) => ({
            name: tool.name.slice(0, 200),
            description: tool.description.slice(0, 20_000),
            input_schema: tool.inputSchema,
            ...(tool.annotations ? { annotations: tool.annotations } : {}),
          })),
        },
      });
      for (const refusal of mcpServerTools(server.name, tools, refuseCalls).refused) {
        records.push({
          continuity: options.continuity,
          type: "mcp.tool-refused",
          data: { server: server.name, tool: refusal.tool, reason: refusal.reason.slice(0, 2000) },
        });
      }
      listings.set(server.name, tools);
    } catch (error) {
      failed.set(server.name, error instanceof Error ? error.message : String(error));
    }
  }
  return { listings, failed, records };
}

/**
 * Connects to `server`, lists its tools (every page) and disconnects, signing in when it asks
 * for OAuth (`oauth` reaches a person, as `spool mcp login` does). Rejects with `McpError` when
 * the server cannot be reached, does not answer within its timeout, or refuses the sign-in.
 */
export async function listServerTools(
  server: McpServerConfig,
  fetchImpl?: typeof fetch,
  oauth?: McpConnectOptions["oauth"],
): Promise<McpToolInfo[]> {
  const connection = await openMcpConnection(server, {
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
    ...(oauth ? { oauth } : {}),
  });
  try {
    return await listConnectionTools(server, connection, { timeout: server.timeoutSeconds * 1000 });
  } finally {
    // A server that ignores its stdin closing is killed a few seconds later by the SDK; the
    // listing need not wait for that.
    void connection.close();
  }
}

function fromEvent(tool: EventOf<"mcp.tools-listed">["data"]["tools"][number]): McpToolInfo {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema as Record<string, unknown>,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
}

function canonical(tools: McpToolInfo[]): McpToolInfo[] {
  return JSON.parse(canonicalJson(tools)) as McpToolInfo[];
}
