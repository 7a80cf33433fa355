/**
 * The real Spool server (`createServer` with an `AgentHost` and `AccessTokens`, as `spool serve`
 * starts it) on a loopback port over a SQLite store in a temporary workspace, serving the built
 * dashboard, with one owner token for the tests.
 */
import { mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { AccessTokens, AgentHost, createServer } from "../../src/server/index.js";

/** A running server. */
export interface SpoolServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** An owner token's secret. */
  token: string;
  /** The workspace agents are assembled from (`.ai/agents/` holds their manifests). */
  workspace: string;
  store: EventStore;
  close(): Promise<void>;
}

/** Starts the server in `scratch/workspace`, its agent configured by `env`. */
export async function startSpoolServer(options: {
  scratch: string;
  dashboard: string;
  env: Record<string, string>;
}): Promise<SpoolServer> {
  const workspace = join(options.scratch, "workspace");
  mkdirSync(workspace, { recursive: true });
  const store = await openEventStore({ db: join(workspace, ".spool"), env: {} });
  const tokens = new AccessTokens(store);
  const env = { ...options.env, HOME: options.scratch };
  const host = new AgentHost({ store, workspace, env, lease: {} });
  const { secret } = await tokens.create({ actor: "ada", role: "owner", by: "test" });
  const app = createServer({ store, host, tokens, dashboard: { dir: options.dashboard } });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token: secret,
    workspace,
    store,
    async close() {
      await host.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
