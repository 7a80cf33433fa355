/**
 * `spool mcp login <server>` against a real OAuth-protected MCP server: the conformance suite's
 * `auth/metadata-default` scenario served on its own (the suite's interactive mode), whose
 * authorization server approves at once. Spool discovers, registers, signs in with PKCE and
 * keeps the tokens in a 0600 file, printing no token.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";
import { memoryOutput } from "./support/cli.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const conformance = join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "conformance",
  "dist",
  "index.js",
);
let child: ChildProcess;
let url: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-mcp-login-"));
  child = spawn(process.execPath, [conformance, "client", "--scenario", "auth/metadata-default"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const found = /Server URL: (\S+)/.exec(seen);
      if (found) resolve(found[1]!);
    });
    child.once("exit", (code) =>
      reject(new Error(`the scenario server exited (${code}): ${seen}`)),
    );
  });
  mkdirSync(join(dir, ".ai"));
  writeFileSync(join(dir, ".ai", "mcp.json"), JSON.stringify({ servers: { guarded: { url } } }));
});
afterAll(() => {
  child.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe("spool mcp login", () => {
  it("signs in to an OAuth-protected server and keeps its tokens in a 0600 file", async () => {
    const stdout = memoryOutput();
    const stderr = memoryOutput();
    const env = { HOME: dir, SPOOL_CONFIG_DIR: join(dir, "config") };
    const code = await main(["mcp", "login", "guarded"], { stdout, stderr, env, cwd: dir });
    expect(stderr.text).toBe("");
    expect(code).toBe(0);
    expect(stdout.text).toBe('Signed in to MCP server "guarded": 1 tool.\n');
    const folder = join(dir, "config", "mcp-oauth");
    const [file, ...others] = readdirSync(folder);
    expect(others).toEqual([]);
    expect(file).toMatch(/^guarded-[0-9a-f]{12}\.json$/);
    if (process.platform !== "win32")
      expect(statSync(join(folder, file!)).mode & 0o777).toBe(0o600);
    expect(stdout.text + stderr.text).not.toContain("test-token");
  });

  it("has its usage in spool mcp --help", async () => {
    const stdout = memoryOutput();
    const code = await main(["mcp", "login", "--help"], {
      stdout,
      stderr: memoryOutput(),
      env: { HOME: dir },
      cwd: dir,
    });
    expect(code).toBe(0);
    expect(stdout.text).toContain("spool mcp login <server>");
    expect(stdout.text).toContain("spool mcp login notes");
  });

  it("refuses a server no mcp.json declares, naming those that exist", async () => {
    const stdout = memoryOutput();
    const stderr = memoryOutput();
    const code = await main(["mcp", "login", "nowhere"], {
      stdout,
      stderr,
      env: { HOME: dir },
      cwd: dir,
    });
    expect(code).toBe(2);
    expect(stderr.text).toContain(
      'no MCP server "nowhere" in .ai/mcp.json or ~/.ai/mcp.json (declared: guarded)',
    );
  });
});
