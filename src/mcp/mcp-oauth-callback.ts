import { createServer } from "node:http";
import { McpError } from "./mcp-error.js";

/** A loopback listener waiting for the authorization server to redirect a browser back. */
export interface OAuthCallbackListener {
  /** Resolves with the full callback URL (its `code`, `state` or `error`); rejects on timeout. */
  readonly callback: Promise<URL>;
  /** Stops listening. Never rejects. */
  close(): Promise<void>;
}

/**
 * Listens on `redirect`'s host (a loopback address) and port for one request to its path: the
 * browser's return from the authorization server. Answers it with a short page telling the
 * person to go back to the terminal; other paths get 404. `callback` rejects with `McpError`
 * (`relic.mcp.unauthorized`) after `timeoutMs`, or when the port cannot be bound. Refuses a
 * redirect URL that is not `http://127.0.0.1`, `http://[::1]` or `http://localhost` (RFC 8252).
 */
export async function listenForOAuthCallback(
  redirect: URL,
  server: string,
  timeoutMs: number,
): Promise<OAuthCallbackListener> {
  const host = redirect.hostname.replace(/^\[|\]$/g, "");
  if (redirect.protocol !== "http:" || !["127.0.0.1", "::1", "localhost"].includes(host)) {
    throw new McpError(
      "relic.mcp.unauthorized",
      `the OAuth redirect URL of MCP server "${server}" (${redirect.origin}) is not a loopback address`,
      {
        hint: "Spool catches the sign-in on http://127.0.0.1:<port>/callback; give oauth.callbackPort",
      },
    );
  }
  let settle: { resolve: (url: URL) => void; reject: (error: unknown) => void } | undefined;
  const callback = new Promise<URL>((resolve, reject) => {
    settle = { resolve, reject };
  });
  callback.catch(() => undefined);
  const listener = createServer((request, response) => {
    const url = new URL(request.url ?? "/", redirect);
    if (url.pathname !== redirect.pathname) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(
      url.searchParams.has("code")
        ? "<p>Spool is signed in. You can close this window and go back to the terminal.</p>"
        : "<p>Signing in did not succeed. Go back to the terminal to see why.</p>",
    );
    settle?.resolve(url);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", (error) =>
      reject(
        new McpError(
          "relic.mcp.unauthorized",
          `cannot listen on ${redirect.host} for the sign-in of MCP server "${server}": ${error.message}`,
          { hint: "Free that port, or give another oauth.callbackPort", cause: error },
        ),
      ),
    );
    listener.listen(Number(redirect.port), host, resolve);
  });
  const timer = setTimeout(
    () =>
      settle?.reject(
        new McpError(
          "relic.mcp.unauthorized",
          `nobody completed the sign-in of MCP server "${server}" within ${Math.round(timeoutMs / 1000)} s`,
          {
            hint: "Open the printed URL in a browser on this machine, then sign in",
            retryable: true,
          },
        ),
      ),
    timeoutMs,
  );
  timer.unref();
  return {
    callback,
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(timer);
        listener.closeAllConnections();
        listener.close(() => resolve());
      }),
  };
}
