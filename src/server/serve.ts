import type { AddressInfo } from "node:net";
import { serve as listen, type ServerType } from "@hono/node-server";
import type { EventStore } from "../log/index.js";
import type { LeaseOptions } from "../runtime/index.js";
import { AccessTokens } from "./access-tokens.js";
import { AgentHost, type AgentHostOptions } from "./agent-host.js";
import { createServer, type ServerDeps } from "./create-server.js";

/** Options of `serve`. */
export interface ServeOptions extends Omit<ServerDeps, "host" | "tokens"> {
  store: EventStore;
  workspace: string;
  env: Record<string, string | undefined>;
  lease: LeaseOptions;
  /** Interface to listen on (default 127.0.0.1: loopback only). */
  hostname?: string;
  /** Port (default 7400; 0 picks a free one). */
  port?: number;
  provider?: AgentHostOptions["provider"];
  threadsDir?: string;
  /** How each continuity's session opens (see `AgentHostOptions.openSession`). */
  openSession?: AgentHostOptions["openSession"];
}

/** A listening Spool server. */
export interface RunningServer {
  /** `http://<host>:<port>` */
  readonly url: string;
  readonly port: number;
  readonly host: AgentHost;
  readonly tokens: AccessTokens;
  /**
   * Stops listening, ends open streams, cancels the runs this server runs and releases their
   * leases. The store stays open (its opener closes it). Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Starts the API (`createServer`) on `hostname:port` with `@hono/node-server`, and follows token
 * revocations live (so open streams of a revoked token end at once).
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { store, workspace, env, lease, provider, threadsDir, openSession } = options;
  const host = new AgentHost({
    store,
    workspace,
    env,
    lease,
    ...(provider ? { provider } : {}),
    ...(threadsDir !== undefined ? { threadsDir } : {}),
    ...(openSession ? { openSession } : {}),
  });
  const tokens = new AccessTokens(store);
  const app = createServer({ ...options, host, tokens });
  const watching = new AbortController();
  const watch = tokens.watch(watching.signal).catch(() => undefined);
  const hostname = options.hostname ?? "127.0.0.1";
  let server: ServerType | undefined;
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server = listen({ fetch: app.fetch, hostname, port: options.port ?? 7400 }, resolve);
    server.once("error", reject);
  });
  let closing: Promise<void> | undefined;
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `http://${shown}:${address.port}`,
    port: address.port,
    host,
    tokens,
    close() {
      closing ??= (async () => {
        watching.abort();
        const closed = new Promise<void>((resolve) => server?.close(() => resolve()));
        if (server && "closeAllConnections" in server) server.closeAllConnections();
        await closed;
        await watch;
        await host.close();
      })();
      return closing;
    },
  };
}
