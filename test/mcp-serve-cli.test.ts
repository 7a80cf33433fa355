/**
 * `spool mcp serve` through its public entry point: the CLI (a bundle of `src/cli/entry.ts`, the
 * program `bin/spool.js` runs once built) spawned over stdio and driven
 * by the MCP SDK's own Client, as Claude Desktop or Cursor would. The agent is the built-in demo
 * (no provider configured), so the test needs no model.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BundledScript,
  bundleScript,
  runToExit,
  spawnBundled,
} from "./support/child-process.js";

let bundle: BundledScript;
let workspace: string;
let client: Client;

beforeAll(async () => {
  bundle = await bundleScript("src/cli/entry.ts");
  workspace = mkdtempSync(join(tmpdir(), "spool-mcp-serve-"));
  writeFileSync(join(workspace, "notes.md"), "TODO: answer over MCP\n");
  client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...bundle.args, "mcp", "serve", "--db", join(workspace, "store")],
      cwd: workspace,
      env: { PATH: process.env.PATH ?? "", HOME: workspace },
      stderr: "pipe",
    }),
  );
});
afterAll(async () => {
  await client.close();
  bundle.remove();
  rmSync(workspace, { recursive: true, force: true });
});

const text = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  (result.content as { type: string; text: string }[]).map((part) => part.text).join("");

describe("spool mcp serve", () => {
  it("offers send_turn and read_conversation, and runs the agent on a continuity by name", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "read_conversation",
      "search_memory",
      "send_turn",
    ]);

    const sent = await client.callTool({
      name: "send_turn",
      arguments: { continuity: "desk", text: "What is left to do?" },
    });
    expect(sent.isError).toBeFalsy();
    expect(text(sent)).toContain("TODO");

    const read = await client.callTool({
      name: "read_conversation",
      arguments: { continuity: "desk", limit: 10 },
    });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain("user");
    expect(text(read)).toContain("What is left to do?");
    expect(text(read)).toContain(text(sent).slice(0, 20));
  });

  it("answers a bad call with a tool error, not a crash", async () => {
    const bad = await client.callTool({
      name: "read_conversation",
      arguments: { continuity: "desk", limit: 0 },
    });
    expect(bad.isError).toBe(true);
    const after = await client.callTool({
      name: "read_conversation",
      arguments: { continuity: "nowhere" },
    });
    expect(text(after)).toBe("(no messages yet)");
  });

  it("search_memory finds a fact pinned in another process after the server started", async () => {
    // "desk" exists (the first test created it, under that id).
    const pinned = await runToExit(
      spawnBundled(bundle, [
        "pin",
        "The billing deploy key rotates every Tuesday at noon",
        "--continuity",
        "desk",
        "--db",
        join(workspace, "store"),
      ]),
    );
    expect(pinned.code, pinned.stderr).toBe(0);
    const found = await client.callTool({
      name: "search_memory",
      arguments: { query: "when does the deploy key rotate?", limit: 3 },
    });
    expect(found.isError).toBeFalsy();
    const result = JSON.parse(text(found)) as {
      ranking: string;
      hits: { kind: string; rank: number; text: string }[];
    };
    expect(result.ranking).toBe("fts");
    expect(result.hits[0]).toMatchObject({
      kind: "fact",
      rank: 1,
      text: "The billing deploy key rotates every Tuesday at noon",
    });
    const none = await client.callTool({
      name: "search_memory",
      arguments: { query: "zanzibar", limit: 3 },
    });
    expect(JSON.parse(text(none))).toMatchObject({ hits: [] });
  });
});
