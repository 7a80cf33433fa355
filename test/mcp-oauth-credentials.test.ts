/**
 * Spool's MCP OAuth client outside the protocol flow (which the conformance scenarios cover):
 * credentials persist in a 0600 file that is refused when others may read it, configured
 * secrets never reach that file, and a sign-in that needs a person prints the URL and catches
 * the browser's return on the loopback listener, checking its state.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createMcpOAuth,
  McpError,
  type McpServerConfig,
  openMcpOAuthStore,
} from "../src/mcp/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-mcp-oauth-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const server = (oauth: Record<string, unknown> = {}) =>
  ({
    name: "remote",
    file: ".ai/mcp.json",
    timeoutSeconds: 10,
    fingerprint: "f",
    transport: "http",
    url: "https://mcp.example.com/mcp",
    headers: {},
    credentialsDir: join(dir, "mcp-oauth"),
    oauth: { grantType: "authorization_code", ...oauth },
  }) as McpServerConfig & { transport: "http"; oauth: { grantType: "authorization_code" } };

function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function refusal(run: () => unknown): Promise<McpError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  }
  throw new Error("expected a refusal");
}

describe("MCP OAuth credentials", () => {
  it("persist tokens and the registration in a 0600 file that a new process reads back", async () => {
    const first = await createMcpOAuth(server());
    await first.provider.saveClientInformation!({ client_id: "dyn-1", client_secret: "s-1" });
    await first.provider.saveTokens({ access_token: "at-1", token_type: "Bearer" });
    const store = openMcpOAuthStore(
      join(dir, "mcp-oauth"),
      "remote",
      "https://mcp.example.com/mcp",
    );
    if (process.platform !== "win32") {
      expect(statSync(store.path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, "mcp-oauth")).mode & 0o777).toBe(0o700);
    }
    const again = await createMcpOAuth(server());
    expect(await again.provider.tokens()).toEqual({ access_token: "at-1", token_type: "Bearer" });
    expect(await again.provider.clientInformation()).toEqual({
      client_id: "dyn-1",
      client_secret: "s-1",
    });
    // The registered redirect (its loopback port) is kept, so the registration stays valid.
    expect(again.provider.redirectUrl).toBe(first.provider.redirectUrl);
    await again.provider.invalidateCredentials!("tokens");
    expect(await (await createMcpOAuth(server())).provider.tokens()).toBeUndefined();
  });

  it("keeps a configured client's secret out of the file", async () => {
    const oauth = await createMcpOAuth(
      server({ clientId: "pre", clientSecret: "configured-secret" }),
    );
    await oauth.provider.saveClientInformation!({
      client_id: "pre",
      client_secret: "configured-secret",
    });
    await oauth.provider.saveTokens({ access_token: "at-2", token_type: "Bearer" });
    const store = openMcpOAuthStore(
      join(dir, "mcp-oauth"),
      "remote",
      "https://mcp.example.com/mcp",
    );
    expect(readFileSync(store.path, "utf8")).not.toContain("configured-secret");
    expect(await oauth.provider.clientInformation()).toEqual({
      client_id: "pre",
      client_secret: "configured-secret",
    });
  });

  it.skipIf(process.platform === "win32")(
    "refuses a file others may read, and a broken one, without showing its contents",
    async () => {
      const store = openMcpOAuthStore(join(dir, "mcp-oauth"), "remote", "https://x.example/mcp");
      store.update({ tokens: { access_token: "leaky-token", token_type: "Bearer" } });
      writeFileSync(store.path, readFileSync(store.path), { mode: 0o644 });
      const { chmodSync } = await import("node:fs");
      chmodSync(store.path, 0o644);
      const open = () =>
        openMcpOAuthStore(join(dir, "mcp-oauth"), "remote", "https://x.example/mcp");
      const loose = await refusal(open);
      expect(loose.code).toBe("relic.mcp.unauthorized");
      expect(loose.message).toContain("may be read by other users");
      expect(loose.hint).toContain(`chmod 600 "${store.path}"`);
      writeFileSync(store.path, '{"tokens": {"access_token": "leaky-token", ', { mode: 0o600 });
      chmodSync(store.path, 0o600);
      const broken = await refusal(open);
      expect(broken.message).toContain("is not valid JSON");
      expect(`${broken.message} ${broken.hint} ${String(broken.cause ?? "")}`).not.toContain(
        "leaky-token",
      );
    },
  );

  it("prints the URL when the authorization server wants a person, and catches the browser's return", async () => {
    const port = await closedPort();
    const printed: URL[] = [];
    const oauth = await createMcpOAuth(server({ callbackPort: await closedPort() }), {
      onAuthorizationUrl: (url) => {
        printed.push(url);
        // The person signs in; the browser comes back to Spool's loopback redirect.
        const back = new URL(oauth.provider.redirectUrl!);
        back.searchParams.set("code", "code-from-browser");
        back.searchParams.set("state", url.searchParams.get("state")!);
        void fetch(back);
      },
    });
    // An authorization server that does not approve by itself (here: not reachable directly).
    const authorize = new URL(`http://127.0.0.1:${port}/authorize?state=s-123&client_id=c`);
    await oauth.provider.redirectToAuthorization(authorize);
    expect(await oauth.takeAuthorizationCode()).toBe("code-from-browser");
    expect(printed).toEqual([authorize]);
  });

  it("refuses a return with another state, and says who must sign in when nobody can", async () => {
    const port = await closedPort();
    const forged = await createMcpOAuth(server({ callbackPort: await closedPort() }), {
      onAuthorizationUrl: () => {
        const back = new URL(forged.provider.redirectUrl!);
        back.searchParams.set("code", "stolen");
        back.searchParams.set("state", "not-the-one");
        void fetch(back);
      },
    });
    await forged.provider.redirectToAuthorization(
      new URL(`http://127.0.0.1:${port}/authorize?state=s-1`),
    );
    expect((await refusal(() => forged.takeAuthorizationCode())).message).toContain(
      "came back with another state",
    );

    const unattended = await createMcpOAuth(server());
    await unattended.provider.redirectToAuthorization(
      new URL(`http://127.0.0.1:${port}/authorize?state=s-2`),
    );
    const nobody = await refusal(() => unattended.takeAuthorizationCode());
    expect(nobody.code).toBe("relic.mcp.unauthorized");
    expect(nobody.message).toContain("needs a person to sign in");
    expect(nobody.hint).toContain("spool mcp login remote");
  });
});
