/**
 * The real Spool server (`src/server`: `createServer` with an `AgentHost` and `AccessTokens`) on a
 * loopback port over a SQLite store in a temporary workspace, with the built dashboard mounted as
 * `spool serve` mounts it, and one owner token for the tests.
 *
 * The server is built on its own branch: its modules are loaded by path at run time, and
 * `serverPresent` says whether this checkout has them, so the dashboard's end-to-end tests run as
 * soon as it does and typecheck before.
 */
import { existsSync, mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { dashboardAssets } from "../../src/server/dashboard-assets.js";

const SERVER = fileURLToPath(new URL("../../src/server/", import.meta.url));

/** Whether this checkout has the server's modules (`src/server/create-server.ts`). */
export const serverPresent = existsSync(join(SERVER, "create-server.ts"));

/** A running server. */
export interface SpoolServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** An owner token's secret. */
  token: string;
  store: EventStore;
  close(): Promise<void>;
}

/** What the server's modules give (the part the tests use). */
interface ServerModules {
  createServer(deps: { store: EventStore; host: unknown; tokens: unknown }): Hono;
  AgentHost: new (options: {
    store: EventStore;
    workspace: string;
    env: Record<string, string | undefined>;
    lease: Record<string, never>;
  }) => { close(): Promise<void> };
  AccessTokens: new (
    store: EventStore,
  ) => {
    create(input: { actor: string; role: string; by: string }): Promise<{ secret: string }>;
  };
}

async function serverModules(): Promise<ServerModules> {
  const load = (name: string) => import(join(SERVER, name)) as Promise<Record<string, unknown>>;
  const [create, host, tokens] = await Promise.all([
    load("create-server.ts"),
    load("agent-host.ts"),
    load("access-tokens.ts"),
  ]);
  return {
    createServer: create.createServer as ServerModules["createServer"],
    AgentHost: host.AgentHost as ServerModules["AgentHost"],
    AccessTokens: tokens.AccessTokens as ServerModules["AccessTokens"],
  };
}

/** Starts the server in `scratch/workspace`, its agent configured by `env`. */
export async function startSpoolServer(options: {
  scratch: string;
  dashboard: string;
  env: Record<string, string>;
}): Promise<SpoolServer> {
  const { createServer, AgentHost, AccessTokens } = await serverModules();
  const workspace = join(options.scratch, "workspace");
  mkdirSync(workspace, { recursive: true });
  const store = await openEventStore({ db: join(workspace, ".spool"), env: {} });
  const tokens = new AccessTokens(store);
  const env = { ...options.env, HOME: options.scratch };
  const host = new AgentHost({ store, workspace, env, lease: {} });
  const { secret } = await tokens.create({ actor: "ada", role: "owner", by: "test" });
  const app = createServer({ store, host, tokens });
  app.on(["GET", "HEAD"], "*", dashboardAssets({ dir: options.dashboard }));
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token: secret,
    store,
    async close() {
      await host.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
