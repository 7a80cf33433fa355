/**
 * The MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance` 0.1.13) run
 * against Spool's MCP client (`test/support/mcp-conformance-client.ts`). The scenarios that need
 * capabilities Spool's client does not declare (elicitation, OAuth) are not run: docs/mcp.md
 * lists them among the limits.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL("..", import.meta.url));
const conformance = join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "conformance",
  "dist",
  "index.js",
);
const client = join(root, "test", "support", "mcp-conformance-client.ts");
const tsx = require.resolve("tsx");
const output = mkdtempSync(join(tmpdir(), "spool-conformance-results-"));
afterAll(() => rmSync(output, { recursive: true, force: true }));

describe("the MCP conformance client scenarios", () => {
  // Concurrently: each spends most of its time starting the client under tsx.
  it.concurrent.each(["initialize", "tools_call", "sse-retry"])("passes %s", async (scenario) => {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [
        conformance,
        "client",
        "--command",
        `"${process.execPath}" --import "${tsx}" "${client}"`,
        "--scenario",
        scenario,
        "--output-dir",
        output,
      ],
      { cwd: root, timeout: 90_000 },
    );
    const report = `${stdout}${stderr}`;
    expect(report).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(report).toContain("OVERALL: PASSED");
  });
});
