import { listServerTools, loadMcpConfig } from "../../mcp/index.js";
import { type CommandContext, parseCommandArgs, UsageError } from "../context.js";

/**
 * `spool mcp login <server>`: signs in to an HTTP MCP server that asks for OAuth, with a person
 * at hand. Prints the authorization URL on stderr, catches the browser's return on the loopback
 * redirect (`http://127.0.0.1:<port>/callback`), and keeps the tokens in the server's 0600
 * credentials file, where agent sessions (which have nobody to ask) find and refresh them.
 * Then lists the server's tools to show that the sign-in holds. Exit 0 when signed in.
 *
 * Throws `UsageError` for a server no `mcp.json` declares or one that takes no OAuth (stdio,
 * `"oauth": false`, a fixed `Authorization` header); a refused sign-in rejects with the
 * `relic.mcp.unauthorized` error, which never holds a token.
 */
export async function mcpLogin(ctx: CommandContext, args: string[]): Promise<number> {
  const { positionals } = parseCommandArgs("mcp login", args, {});
  const [name, extra] = positionals;
  if (!name) throw new UsageError("mcp login", "name the server to sign in to");
  if (extra !== undefined) {
    throw new UsageError("mcp login", `unexpected argument ${JSON.stringify(extra)}`);
  }
  const servers = loadMcpConfig({
    workspace: ctx.io.cwd,
    env: ctx.io.env,
    ...(ctx.io.env.HOME ? { home: ctx.io.env.HOME } : {}),
  });
  const server = servers.find((candidate) => candidate.name === name);
  if (!server) {
    const known = servers.map((candidate) => candidate.name).join(", ") || "none";
    throw new UsageError(
      "mcp login",
      `no MCP server "${name}" in .ai/mcp.json or ~/.ai/mcp.json (declared: ${known})`,
    );
  }
  if (server.transport === "stdio" || !server.oauth) {
    throw new UsageError(
      "mcp login",
      `MCP server "${name}" takes no OAuth sign-in (a stdio server, "oauth": false, or an Authorization header)`,
    );
  }
  const tools = await listServerTools(server, undefined, {
    onAuthorizationUrl: (url) => {
      ctx.err(`To let Spool use MCP server "${name}", open this URL in a browser and sign in:`);
      ctx.err(`  ${url.href}`);
      ctx.err("Waiting for the browser to come back …");
    },
  });
  ctx.out(
    `Signed in to MCP server "${name}": ${tools.length} tool${tools.length === 1 ? "" : "s"}.`,
  );
  return 0;
}
