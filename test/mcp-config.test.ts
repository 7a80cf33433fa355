// biome-ignore-all lint/suspicious/noTemplateCurlyInString: mcp.json's own ${env:X} syntax
/**
 * `.ai/mcp.json` as people already write it (Claude Desktop, Cursor, VS Code), read from the
 * project and user tiers, with `${env:X}` expansion and errors that name the file, the server
 * and the field without showing a secret.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadMcpConfig, McpConfigError } from "../src/mcp/index.js";

let workspace: string;
let home: string;
beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), "spool-mcp-config-ws-"));
  home = mkdtempSync(join(tmpdir(), "spool-mcp-config-home-"));
  mkdirSync(join(workspace, ".ai"));
  mkdirSync(join(home, ".ai"));
});
afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const write = (where: string, value: unknown) =>
  writeFileSync(
    join(where, ".ai", "mcp.json"),
    typeof value === "string" ? value : JSON.stringify(value),
  );
const load = (env: Record<string, string> = {}) => loadMcpConfig({ workspace, home, env });

function failure(env: Record<string, string> = {}): McpConfigError {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError);
    return error as McpConfigError;
  }
  throw new Error("expected the config to be refused");
}

describe("mcp.json", () => {
  it("reads Claude Desktop's and Cursor's mcpServers, with ${env:X} in env, args and headers", () => {
    write(workspace, {
      mcpServers: {
        files: {
          command: "npx",
          args: ["-y", "server-filesystem", "${workspaceFolder}"],
          env: { TOKEN: "${env:FILES_TOKEN}" },
        },
        remote: {
          url: "https://mcp.example.com/mcp",
          headers: { Authorization: "Bearer ${env:REMOTE_KEY}" },
        },
        off: { command: "nothing", disabled: true },
      },
    });
    const servers = load({ FILES_TOKEN: "t-123", REMOTE_KEY: "k-456" });
    expect(servers.map((server) => server.name)).toEqual(["files", "remote"]);
    expect(servers[0]).toMatchObject({
      transport: "stdio",
      command: "npx",
      args: ["-y", "server-filesystem", workspace],
      env: { TOKEN: "t-123" },
      file: join(".ai", "mcp.json"),
      timeoutSeconds: 60,
    });
    expect(servers[1]).toMatchObject({
      transport: "http",
      headers: { Authorization: "Bearer k-456" },
    });
    // The fingerprint follows what the server offers, never a secret.
    const again = load({ FILES_TOKEN: "other", REMOTE_KEY: "other" });
    expect(again.map((server) => server.fingerprint)).toEqual(
      servers.map((server) => server.fingerprint),
    );
  });

  it("reads VS Code's servers with type, and takes the project's server over the user's", () => {
    write(home, {
      servers: {
        shared: { type: "stdio", command: "user-command" },
        legacy: { type: "sse", url: "http://127.0.0.1:3001/sse" },
      },
    });
    write(workspace, { servers: { shared: { type: "http", url: "http://127.0.0.1:3000/mcp" } } });
    const servers = load();
    expect(servers).toEqual([
      expect.objectContaining({
        name: "legacy",
        transport: "sse",
        file: join("~", ".ai", "mcp.json"),
      }),
      expect.objectContaining({
        name: "shared",
        transport: "http",
        url: "http://127.0.0.1:3000/mcp",
      }),
    ]);
  });

  it("has no servers without a file", () => {
    expect(load()).toEqual([]);
  });

  it("names the file, the server and the field of a mistake, never a secret's value", () => {
    write(workspace, {
      mcpServers: {
        remote: {
          url: "https://x.example/mcp",
          headers: { Authorization: "Bearer ${env:UNSET_KEY}" },
        },
      },
    });
    const unset = failure();
    expect(unset.message).toContain(join(".ai", "mcp.json"));
    expect(unset.message).toContain('server "remote"');
    expect(unset.message).toContain('field "headers.Authorization"');
    expect(unset.message).toContain("UNSET_KEY");

    write(workspace, { mcpServers: { both: { args: ["x"] } } });
    expect(failure().message).toMatch(/server "both".*neither a command.*nor a url/);

    write(workspace, { mcpServers: { "has space": { command: "x" } } });
    expect(failure().details).toMatchObject({ server: "has space" });

    write(workspace, { mcpServers: { bad: { command: "x", timeout: -1 } } });
    expect(failure().details).toMatchObject({ server: "bad", field: "timeout" });

    write(workspace, '{"mcpServers": {');
    expect(failure().message).toMatch(/is not valid JSON/);

    write(workspace, {
      mcpServers: { fine: { command: "x", env: { KEY: "sk-very-secret" } } },
      other: 1,
    });
    expect(load()[0]).toMatchObject({ env: { KEY: "sk-very-secret" } });
    write(workspace, {
      mcpServers: { leaky: { command: "x", env: { KEY: "sk-very-secret" }, url: 7 } },
    });
    expect(failure().message).not.toContain("sk-very-secret");
  });

  it("reads each server's elicitation policy and OAuth settings, secrets expanded", () => {
    write(workspace, {
      servers: {
        open: { url: "https://open.example/mcp" },
        tokened: { url: "https://t.example/mcp", headers: { Authorization: "Bearer x" } },
        off: { url: "https://off.example/mcp", oauth: false, elicitation: "decline" },
        machine: {
          url: "https://m.example/mcp",
          oauth: {
            grantType: "client_credentials",
            clientId: "svc",
            clientSecret: "${env:SVC_SECRET}",
            scope: "read write",
          },
        },
        local: { command: "x" },
      },
    });
    const servers = Object.fromEntries(
      load({ SVC_SECRET: "s3cret", SPOOL_CONFIG_DIR: join(home, "cfg") }).map((server) => [
        server.name,
        server,
      ]),
    );
    // An HTTP server signs in when asked, unless it carries its own Authorization or says no.
    expect(servers.open).toMatchObject({
      elicitation: "defaults",
      oauth: { grantType: "authorization_code" },
      credentialsDir: join(home, "cfg", "mcp-oauth"),
    });
    expect(servers.tokened).not.toHaveProperty("oauth");
    expect(servers.off).not.toHaveProperty("oauth");
    expect(servers.off!.elicitation).toBe("decline");
    expect(servers.machine).toMatchObject({
      oauth: {
        grantType: "client_credentials",
        clientId: "svc",
        clientSecret: "s3cret",
        scope: "read write",
      },
    });
    expect(servers.local).toMatchObject({ elicitation: "defaults" });
    expect(servers.local).not.toHaveProperty("oauth");
    // Without SPOOL_CONFIG_DIR: XDG_CONFIG_HOME, else ~/.config/spool.
    expect(load({ SVC_SECRET: "s" }).find((s) => s.name === "open")).toMatchObject({
      credentialsDir: join(home, ".config", "spool", "mcp-oauth"),
    });
  });

  it("refuses OAuth settings that cannot work, naming the field and never the secret", () => {
    const oauth = (settings: unknown) =>
      write(workspace, { servers: { remote: { url: "https://r.example/mcp", oauth: settings } } });
    oauth({ clientSecret: "${env:S}" });
    const orphan = failure({ S: "hidden-secret" });
    expect(orphan.details).toMatchObject({ server: "remote", field: "oauth.clientId" });
    expect(orphan.message).not.toContain("hidden-secret");
    oauth({ grantType: "client_credentials", clientId: "c" });
    expect(failure().details).toMatchObject({ field: "oauth.grantType" });
    oauth({ clientId: "c", clientSecret: "a", privateKey: "b" });
    expect(failure().details).toMatchObject({ field: "oauth.privateKey" });
    oauth({ clientMetadataUrl: "http://insecure.example/client.json" });
    expect(failure().details).toMatchObject({ field: "oauth.clientMetadataUrl" });
    oauth({ grantType: "password" });
    expect(failure().details).toMatchObject({ field: "oauth.grantType" });
    oauth({ callbackPort: 70000 });
    expect(failure().details).toMatchObject({ field: "oauth.callbackPort" });
    write(workspace, { servers: { remote: { command: "x", elicitation: "always" } } });
    expect(failure().details).toMatchObject({ field: "elicitation" });
  });
});
