import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import {
  type McpHttpServer,
  type McpOAuthConfig,
  type McpServerConfig,
  mcpCredentialsDir,
} from "./mcp-config.js";
import { McpError } from "./mcp-error.js";
import { listenForOAuthCallback } from "./mcp-oauth-callback.js";
import { type McpOAuthRecord, openMcpOAuthStore } from "./mcp-oauth-store.js";

/** How a sign-in that needs a person reaches one. */
export interface McpOAuthOptions {
  /** `fetch` for the authorization request (default the global one). */
  fetch?: typeof fetch;
  /**
   * Shows the person the URL to open (`spool mcp login` prints it). Without it, a sign-in the
   * authorization server does not approve by itself fails with `relic.mcp.unauthorized`.
   */
  onAuthorizationUrl?: (url: URL) => void;
  /** How long to wait for the person (default 5 minutes). */
  authorizationTimeoutMs?: number;
}

/** An OAuth client provider for one server, and the authorization code its sign-in obtained. */
export interface McpOAuth {
  readonly provider: OAuthClientProvider;
  /**
   * The authorization code of the sign-in the SDK just started (after it threw
   * `UnauthorizedError`), checked against its `state`. Rejects with `McpError`
   * (`relic.mcp.unauthorized`) when the authorization server refused, nobody signed in, or no
   * sign-in was started.
   */
  takeAuthorizationCode(): Promise<string>;
}

/** The most a request is retried after signing in (a server that keeps refusing is let go). */
export const MCP_MAX_AUTHORIZATIONS = 2;

type OAuthServer = McpServerConfig & McpHttpServer & { oauth: McpOAuthConfig };

/**
 * The OAuth client of `server` (MCP authorization: protected-resource and authorization-server
 * discovery, dynamic registration or a pre-registered client or a client metadata URL, PKCE,
 * token exchange and refresh, client credentials with a secret or a signed JWT — the SDK's
 * `auth()` drives these through the provider returned here).
 *
 * The client registration, tokens and discovery results persist in the server's 0600 file
 * under `server.credentialsDir`; a configured client id and secret or key are never written
 * there. Nothing here logs or puts a token or secret in a message.
 *
 * Signing in (authorization code): the authorization URL is first requested without following
 * redirects; an authorization server that approves at once redirects straight to Spool's
 * loopback redirect URL, and the code is read from that. Otherwise the URL goes to
 * `onAuthorizationUrl` and a listener on the loopback redirect port waits for the browser.
 */
export async function createMcpOAuth(
  server: OAuthServer,
  options: McpOAuthOptions = {},
): Promise<McpOAuth> {
  const config = server.oauth;
  const store = openMcpOAuthStore(
    server.credentialsDir ?? mcpCredentialsDir(),
    server.name,
    server.url,
  );
  const redirectUrl =
    config.grantType === "authorization_code" ? await loopbackRedirect(config, store) : undefined;
  const configured: OAuthClientInformationMixed | undefined = config.clientId
    ? {
        client_id: config.clientId,
        ...(config.clientSecret ? { client_secret: config.clientSecret } : {}),
      }
    : undefined;
  const metadata = clientMetadata(config, redirectUrl);
  let verifier: string | undefined;
  let pending: Promise<string> | undefined;
  const forget = (parts: (keyof McpOAuthRecord)[]) => store.forget(parts);
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl;
    },
    ...(config.clientMetadataUrl ? { clientMetadataUrl: config.clientMetadataUrl } : {}),
    get clientMetadata() {
      return metadata;
    },
    state: () => randomBytes(16).toString("base64url"),
    clientInformation: () =>
      configured ?? (store.read().client_information as OAuthClientInformationMixed | undefined),
    saveClientInformation(information) {
      // A configured client stays in the configuration, its secret out of the file.
      if (!configured) {
        store.update({
          client_information: { ...information },
          ...(redirectUrl ? { redirect_url: redirectUrl } : {}),
        });
      }
    },
    tokens: () => store.read().tokens as OAuthTokens | undefined,
    saveTokens: (tokens) => store.update({ tokens: { ...tokens } }),
    redirectToAuthorization(url) {
      pending = authorizationCode(url, redirectUrl!, server.name, options);
      pending.catch(() => undefined);
    },
    saveCodeVerifier(codeVerifier) {
      verifier = codeVerifier;
    },
    codeVerifier() {
      if (!verifier) {
        throw new McpError(
          "relic.mcp.unauthorized",
          "no sign-in is in progress (no PKCE verifier)",
        );
      }
      return verifier;
    },
    saveDiscoveryState: (state) => store.update({ discovery_state: { ...state } }),
    discoveryState: () => store.read().discovery_state as OAuthDiscoveryState | undefined,
    invalidateCredentials(scope) {
      if (scope === "verifier") verifier = undefined;
      else if (scope === "tokens") forget(["tokens"]);
      else if (scope === "client") forget(["client_information"]);
      else if (scope === "discovery") forget(["discovery_state"]);
      else forget(["client_information", "tokens", "discovery_state"]);
    },
    ...machineClient(config),
  };
  return {
    provider,
    async takeAuthorizationCode() {
      const code = pending;
      pending = undefined;
      if (!code) {
        throw new McpError(
          "relic.mcp.unauthorized",
          `MCP server "${server.name}" refused Spool's credentials, and no sign-in was started`,
          {
            hint: `Check the "oauth" settings of "${server.name}" in ${server.file}`,
            details: { server: server.name },
          },
        );
      }
      return await code;
    },
  };
}

/** The loopback redirect URL: the configured port, else the one registered before, else a free one. */
async function loopbackRedirect(
  config: McpOAuthConfig,
  store: ReturnType<typeof openMcpOAuthStore>,
): Promise<string> {
  const stored = store.read().redirect_url;
  const port = config.callbackPort ?? (stored ? Number(new URL(stored).port) : await freePort());
  return `http://127.0.0.1:${port}/callback`;
}

/** What Spool registers as (dynamic registration): a public native client, PKCE only. */
function clientMetadata(
  config: McpOAuthConfig,
  redirectUrl: string | undefined,
): OAuthClientMetadata {
  const interactive = redirectUrl !== undefined;
  return {
    client_name: "Spool",
    redirect_uris: redirectUrl ? [redirectUrl] : [],
    grant_types: interactive ? ["authorization_code", "refresh_token"] : ["client_credentials"],
    response_types: interactive ? ["code"] : [],
    token_endpoint_auth_method: "none",
    ...(config.scope ? { scope: config.scope } : {}),
  };
}

/**
 * The provider's parts for a machine client: a signed JWT for `private_key_jwt`, and the
 * `client_credentials` token request (which the SDK makes instead of a sign-in).
 */
function machineClient(
  config: McpOAuthConfig,
): Pick<OAuthClientProvider, "addClientAuthentication" | "prepareTokenRequest"> {
  return {
    ...(config.privateKey
      ? {
          addClientAuthentication: createPrivateKeyJwtAuth({
            issuer: config.clientId!,
            subject: config.clientId!,
            privateKey: config.privateKey,
            alg: config.signingAlgorithm ?? "RS256",
          }),
        }
      : {}),
    ...(config.grantType === "client_credentials"
      ? {
          prepareTokenRequest: (scope?: string) => {
            const wanted = scope ?? config.scope;
            return new URLSearchParams({
              grant_type: "client_credentials",
              ...(wanted ? { scope: wanted } : {}),
            });
          },
        }
      : {}),
  };
}

/** Follows the sign-in to its authorization code: at once where approved, else through a person. */
async function authorizationCode(
  url: URL,
  redirectUrl: string,
  server: string,
  options: McpOAuthOptions,
): Promise<string> {
  const redirect = new URL(redirectUrl);
  const state = url.searchParams.get("state");
  const fetchImpl = options.fetch ?? fetch;
  try {
    const response = await fetchImpl(url, { redirect: "manual" });
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const target = new URL(location, url);
      if (target.origin === redirect.origin && target.pathname === redirect.pathname) {
        return codeOf(target, state, server);
      }
    }
  } catch (error) {
    if (error instanceof McpError) throw error;
    // An authorization server that cannot be reached this way may still be reached by a browser.
  }
  if (!options.onAuthorizationUrl) {
    throw new McpError(
      "relic.mcp.unauthorized",
      `MCP server "${server}" needs a person to sign in, and this session has nobody to ask`,
      {
        hint: `Run \`spool mcp login ${server}\` once; Spool keeps the tokens and refreshes them`,
        details: { server },
      },
    );
  }
  const listener = await listenForOAuthCallback(
    redirect,
    server,
    options.authorizationTimeoutMs ?? 300_000,
  );
  try {
    options.onAuthorizationUrl(url);
    return codeOf(await listener.callback, state, server);
  } finally {
    await listener.close();
  }
}

function codeOf(callback: URL, state: string | null, server: string): string {
  const error = callback.searchParams.get("error");
  if (error) {
    const description = callback.searchParams.get("error_description");
    throw new McpError(
      "relic.mcp.unauthorized",
      `the authorization server of MCP server "${server}" refused the sign-in: ${error}${description ? ` (${description.slice(0, 500)})` : ""}`,
      { hint: "Sign in again, with an account that may use this server", details: { server } },
    );
  }
  if (state !== null && callback.searchParams.get("state") !== state) {
    throw new McpError(
      "relic.mcp.unauthorized",
      `the sign-in of MCP server "${server}" came back with another state: it was not the one Spool started`,
      { hint: "Sign in again from the URL Spool prints", details: { server } },
    );
  }
  const code = callback.searchParams.get("code");
  if (!code) {
    throw new McpError(
      "relic.mcp.unauthorized",
      `the sign-in of MCP server "${server}" came back without an authorization code`,
      { hint: "Sign in again", details: { server } },
    );
  }
  return code;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
