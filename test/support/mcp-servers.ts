/**
 * The MCP servers the tests run: real ones from npm (`@modelcontextprotocol/server-everything`,
 * `server-filesystem`, `server-memory`) and `mcp-faulty-server.mjs`, launched with this Node.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

/** The entry script of an npm MCP server package (its `bin`). */
export function serverScript(pkg: string): string {
  const manifest = require(`${pkg}/package.json`) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin)[0]!;
  return join(dirname(require.resolve(`${pkg}/package.json`)), bin);
}

/** server-everything's entry script. */
export const EVERYTHING = serverScript("@modelcontextprotocol/server-everything");

/** The faulty test server (echo, crash, hang, two unusable schemas). */
export const FAULTY = join(here, "mcp-faulty-server.mjs");
