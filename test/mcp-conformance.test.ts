/**
 * Every client scenario of the MCP conformance suite (`@modelcontextprotocol/conformance`
 * 0.1.13) runs against Spool's MCP client (`test/support/mcp-conformance-client.ts`). The list
 * comes from the suite itself (`conformance list --client`), so a scenario a new version adds
 * runs here too instead of being skipped unnoticed.
 */
import { execFile, execFileSync } from "node:child_process";
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

/** The suite's client scenarios, as `conformance list --client` prints them (`  - name`). */
const scenarios = execFileSync(process.execPath, [conformance, "list", "--client"], {
  cwd: root,
  encoding: "utf8",
})
  .split("\n")
  .map((line) => /^\s*-\s+(\S+)\s*$/.exec(line)?.[1])
  .filter((name): name is string => name !== undefined);

describe("the MCP conformance client scenarios", () => {
  it("are listed by the suite (so none is skipped by a broken listing)", () => {
    // The version installed lists 4 base scenarios and 19 auth/* ones.
    expect(scenarios.length).toBeGreaterThanOrEqual(23);
    expect(scenarios).toEqual(
      expect.arrayContaining([
        "initialize",
        "elicitation-sep1034-client-defaults",
        "auth/metadata-default",
      ]),
    );
  });

  // Concurrently, a few at a time: each spends most of its time starting the client under tsx.
  it.concurrent.each(scenarios)(
    "passes %s",
    async (scenario) => {
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
          // The client starts under tsx, slowly on a loaded machine; the suite's default is 30 s.
          "--timeout",
          "150000",
        ],
        { cwd: root, timeout: 170_000 },
      );
      const report = `${stdout}${stderr}`;
      expect(report, report).toMatch(/Passed: (\d+)\/\1, 0 failed, 0 warnings/);
      expect(report, report).toContain("OVERALL: PASSED");
    },
    180_000,
  );
});
