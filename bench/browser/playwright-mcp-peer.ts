/**
 * The peer of the browser benchmark: `@playwright/mcp` (Microsoft's Playwright MCP server, from
 * npm) run as its own process over stdio, as an MCP client would run it, driving the same
 * Chromium Spool drives (`@sparticuz/chromium`'s, so nothing is downloaded): headless, no sandbox,
 * an in-memory profile, the same 1280 × 800 viewport, and `--snapshot-mode none` so that an action
 * answers without a snapshot of the page, as Spool's do (`browser_snapshot` still answers with
 * the whole page). Everything else is the peer's default (its 500 ms settle after an action too).
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import sparticuz from "@sparticuz/chromium";

/** A running `@playwright/mcp` and the text of its tool results. */
export interface PlaywrightMcpPeer {
  version: string;
  /** The command line it was started with (the executable path shortened). */
  commandLine: string;
  /** Calls tool `name`; resolves with the text of its result (its text parts joined). */
  call(name: string, args: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** Starts `@playwright/mcp`'s CLI on Spool's Chromium; `outputDir` holds whatever it writes. */
export async function startPlaywrightMcp(outputDir: string): Promise<PlaywrightMcpPeer> {
  // Only package.json is exported; the CLI sits beside it.
  const cli = join(dirname(require.resolve("@playwright/mcp/package.json")), "cli.js");
  const version = (require("@playwright/mcp/package.json") as { version: string }).version;
  const executable = await sparticuz.executablePath();
  const args = [
    "--headless",
    "--no-sandbox",
    "--isolated",
    "--executable-path",
    executable,
    "--viewport-size",
    "1280x800",
    "--snapshot-mode",
    "none",
    "--output-dir",
    outputDir,
  ];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, ...args],
    stderr: "ignore",
  });
  const client = new Client({ name: "spool-bench", version: "1.0.0" });
  await client.connect(transport);
  return {
    version,
    commandLine: `mcp-server-playwright ${args.join(" ").replace(executable, "<@sparticuz/chromium executablePath()>")}`,
    async call(name, toolArgs) {
      const result = (await client.callTool({ name, arguments: toolArgs })) as {
        content?: { type: string; text?: string }[];
        isError?: boolean;
      };
      const text = (result.content ?? []).map((part) => part.text ?? "").join("\n");
      if (result.isError) throw new Error(`@playwright/mcp ${name} failed: ${text.slice(0, 500)}`);
      return text;
    },
    close: () => client.close(),
  };
}
