import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { EventStore } from "../../log/index.js";
import {
  type ConversationMessage,
  createSpoolMcpServer,
  listServerTools,
  loadMcpConfig,
  type McpServerConfig,
  mcpRelicName,
} from "../../mcp/index.js";
import { type MemoryIndex, memoryHitView } from "../../memory/index.js";
import { describeError, type EventData } from "../../spec/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  openStore,
  parseCommandArgs,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { renderTable, truncate } from "../format.js";
import type { CommandHelp } from "../usage.js";
import { mostRecentContinuity } from "./active-continuity.js";
import {
  ensureContinuity,
  foregroundDirective,
  openAgentSession,
  recordSessionMcp,
  sessionMcp,
  sessionMemoryIndex,
} from "./agent-session.js";
import { defaultActor } from "./continuities.js";
import { cliLeaseOptions } from "./continuity-follower.js";

/** The help of `spool mcp`. */
export const MCP_USAGE: CommandHelp = {
  synopsis:
    "spool mcp list [continuity] [--json] | spool mcp serve [--agent <name>] | spool mcp login <server>",
  text: `Usage: spool mcp list [continuity] [--json] [--db <location>]
       spool mcp serve [--agent <name>] [--db <location>]
       spool mcp login <server>

list   The MCP servers of .ai/mcp.json and ~/.ai/mcp.json: the file that declares each, its
       transport, its status in a continuity (default the most recently active one: not started,
       running, stopped, or failed with its last error) and its tools, listed from the server now.
serve  Spool as an MCP server on stdin/stdout, for Claude Desktop, Cursor or any MCP client:
       tools send_turn (run the agent on a continuity, by id or name, and return its response)
       and read_conversation (a continuity's recent messages), and search_memory (the summaries
       and pinned facts of every continuity, see docs/memory.md). A continuity that does not exist
       yet is created by send_turn, for the agent --agent names (default assistant).
login  Signs in to an HTTP MCP server that asks for OAuth: prints the URL to open, catches the
       browser's return on http://127.0.0.1:<port>/callback, and keeps the tokens (0600, in
       ~/.config/spool/mcp-oauth/) for agent sessions, which refresh them on their own.

Options:
  --json                 list: one JSON object per server
  --agent <name>         serve: the agent manifest new continuities run (default assistant)
${DB_HELP_LINES}

Examples:
  spool mcp list
  spool mcp serve --agent researcher
  spool mcp login notes
  Claude Desktop: {"mcpServers": {"spool": {"command": "spool", "args": ["mcp", "serve"]}}}
`,
};

/** One server as `spool mcp list` shows it. */
interface ServerRow {
  server: string;
  file: string;
  transport: string;
  status: string;
  last_error?: string;
  tools: string[];
  error?: string;
}

/** `spool mcp list [continuity] [--json]`: servers, their status and their tools. */
export async function mcpList(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("mcp list", args, {
    ...DB_OPTION,
    json: { type: "boolean" },
  });
  if (positionals.length > 1) {
    throw new UsageError("mcp list", `unexpected argument ${JSON.stringify(positionals[1])}`);
  }
  const servers = loadMcpConfig({ workspace: ctx.io.cwd, env: ctx.io.env });
  const statuses = await relicStatuses(ctx, values.db, positionals[0], servers);
  // Every server is listed at once: each may take its whole timeout to answer.
  const rows = await Promise.all(
    servers.map(async (server): Promise<ServerRow> => {
      const row: ServerRow = {
        server: server.name,
        file: server.file,
        transport: server.transport,
        ...(statuses.get(server.name) ?? { status: "not started" }),
        tools: [],
      };
      try {
        row.tools = (await listServerTools(server)).map((tool) => tool.name);
      } catch (error) {
        row.error = describeError(error);
      }
      return row;
    }),
  );
  if (values.json) {
    for (const row of rows) ctx.out(JSON.stringify(row));
    return 0;
  }
  if (rows.length === 0) {
    ctx.out("No MCP servers: declare them in .ai/mcp.json (see docs/mcp.md).");
    return 0;
  }
  ctx.out(
    renderTable(
      ["SERVER", "FILE", "TRANSPORT", "STATUS", "TOOLS"],
      rows.map((row) => [
        row.server,
        row.file,
        row.transport,
        row.last_error ? `${row.status}: ${truncate(row.last_error, 60)}` : row.status,
        row.error
          ? `unreachable: ${truncate(row.error, 80)}`
          : truncate(row.tools.join(", ") || "(none)", 100),
      ]),
      ctx.style,
    ),
  );
  return 0;
}

/** Each server's relic state in the continuity's log, from its `relic.*` events. */
async function relicStatuses(
  ctx: CommandContext,
  db: string | undefined,
  given: string | undefined,
  servers: readonly McpServerConfig[],
): Promise<Map<string, { status: string; last_error?: string }>> {
  const statuses = new Map<string, { status: string; last_error?: string }>();
  const target = locateStore(ctx, db);
  if (!target.exists) return statuses;
  const store = await openStore(ctx, target);
  try {
    const continuity = given ?? (await mostRecentContinuity(store));
    if (continuity === undefined) return statuses;
    const byRelic = new Map(servers.map((server) => [mcpRelicName(server.name), server.name]));
    for await (const event of store.read({
      continuity,
      types: ["relic.started", "relic.stopped", "relic.failed"],
    })) {
      const data = event.data as { relic: string; error?: { message: string } };
      const server = byRelic.get(data.relic);
      if (server === undefined) continue;
      const before = statuses.get(server);
      if (event.type === "relic.started") statuses.set(server, { status: "running" });
      else if (event.type === "relic.failed") {
        statuses.set(server, { status: "failed", last_error: data.error?.message ?? "" });
      } else if (before?.status !== "failed") statuses.set(server, { status: "stopped" });
    }
  } finally {
    await store.close();
  }
  return statuses;
}

/** `spool mcp serve`: Spool as an MCP server on stdio until stdin closes. */
export async function mcpServe(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("mcp serve", args, {
    ...DB_OPTION,
    agent: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError("mcp serve", `unexpected argument ${JSON.stringify(positionals[0])}`);
  }
  const store = await openStore(ctx, locateStore(ctx, values.db));
  const memory = sessionMemoryIndex(ctx, store);
  const server = createSpoolMcpServer({
    sendTurn: (continuity, text) => sendTurn(ctx, store, continuity, text, values.agent),
    readConversation: async (continuity, limit) =>
      readConversation(store, await resolveContinuity(store, continuity), limit),
    ...(memory ? { searchMemory: (query, limit) => searchMemory(memory, query, limit) } : {}),
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  await memory?.close().catch(() => undefined);
  await store.close();
  return 0;
}

/** `search_memory`: the hits of the whole workspace's memory, each with its text. */
async function searchMemory(index: MemoryIndex, query: string, limit: number) {
  const found = await index.search({ text: query, limit: Math.min(Math.max(limit, 1), 100) });
  return { ranking: found.ranking, hits: found.hits.map((hit) => memoryHitView(hit)) };
}

/** The id of the continuity called `given` (an id, else the title of one), or `given` itself. */
async function resolveContinuity(store: EventStore, given: string): Promise<string> {
  if (await store.continuity(given)) return given;
  for await (const event of store.read({ types: ["continuity.created"] })) {
    if ((event.data as { title?: unknown }).title === given) return event.continuity;
  }
  return given;
}

async function sendTurn(
  ctx: CommandContext,
  store: EventStore,
  given: string,
  text: string,
  agentName: string | undefined,
): Promise<{ status: string; response: string }> {
  const continuity = await resolveContinuity(store, given);
  const foreground = await foregroundDirective(store, continuity);
  const agent = foreground?.agent ?? agentName;
  const mcp = await sessionMcp(ctx, store, continuity, agent);
  const session = openAgentSession(ctx, store, continuity, {
    mcp,
    ...(agent !== undefined ? { agent } : {}),
    ...(foreground ? { directive: foreground.directive } : {}),
    lease: cliLeaseOptions(ctx),
  });
  try {
    const created = await ensureContinuity(ctx, store, continuity, given, "mcp", agent);
    await recordSessionMcp(store, mcp);
    if (!created) await session.runtime.resume(continuity);
    const result = await session.runtime.submit(continuity, {
      text,
      actor: defaultActor(ctx),
      origin: "mcp",
    });
    return { status: result.status, response: result.result ?? "" };
  } finally {
    await session.close();
  }
}

/** The newest `limit` turns and final responses of `continuity`, oldest first. */
async function readConversation(
  store: EventStore,
  continuity: string,
  limit: number,
): Promise<ConversationMessage[]> {
  const messages: ConversationMessage[] = [];
  for await (const event of store.read({ continuity, types: ["turn.added", "run.completed"] })) {
    if (event.type === "turn.added") {
      const data = event.data as EventData<"turn.added">;
      messages.push({ role: "user", by: event.actor ?? "?", text: data.text, ts: event.ts });
    } else {
      const data = event.data as EventData<"run.completed">;
      if (data.turn === undefined || !data.result) continue;
      messages.push({ role: "assistant", by: "agent", text: data.result, ts: event.ts });
    }
    if (messages.length > limit * 2) messages.splice(0, messages.length - limit);
  }
  return messages.slice(-limit);
}
