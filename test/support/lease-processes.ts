import { join } from "node:path";
import { inject } from "vitest";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import type { SpoolEvent } from "../../src/spec/index.js";
import { createWorkspace, type SpoolProcess, spoolBundled, type Workspace } from "./cli-e2e.js";
import { createTestDatabase } from "./postgres-server.js";
import { type ReplayServer, startReplayServer } from "./replay-server.js";

/** A workspace where several `spool` processes share one store and one loopback Anthropic model. */
export interface LeaseProcesses {
  workspace: Workspace;
  model: ReplayServer;
  /** The store's address (`SPOOL_DB` of every process). */
  db: string;
  /** Starts `spool args` (bundled) in the workspace; `close` kills it if it still runs. */
  spool(args: string[]): SpoolProcess;
  /** Runs `work` on a store of its own over `db`, closed after. */
  withStore<T>(work: (store: EventStore) => Promise<T>): Promise<T>;
  /** Every event of `continuity`, in order. */
  events(continuity: string): Promise<SpoolEvent[]>;
  close(): Promise<void>;
}

/**
 * Opens a fresh workspace on `kind` (a SQLite store in `.spool/`, or a new database of the test
 * run's PostgreSQL) with a loopback Anthropic model, fast durability and leases of `ttlMs`.
 */
export async function leaseProcesses(
  kind: "sqlite" | "postgres",
  bundle: { args: readonly string[] },
  options: { prefix: string; ttlMs: number },
): Promise<LeaseProcesses> {
  const workspace = createWorkspace(options.prefix);
  const model = await startReplayServer();
  const db =
    kind === "postgres"
      ? await createTestDatabase(inject("postgresUrl"))
      : join(workspace.dir, ".spool");
  const env = workspace.env({
    ANTHROPIC_API_KEY: "sk-ant-lease-test-000000000000000",
    ANTHROPIC_BASE_URL: model.url,
    SPOOL_DB: db,
    SPOOL_LEASE_TTL_MS: String(options.ttlMs),
    SPOOL_DURABILITY: "fast",
  });
  const running: SpoolProcess[] = [];
  const withStore = async <T>(work: (store: EventStore) => Promise<T>) => {
    const store = await openEventStore({ db, env: {} });
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  };
  return {
    workspace,
    model,
    db,
    spool(args) {
      const child = spoolBundled(bundle, args, { cwd: workspace.dir, env });
      running.push(child);
      return child;
    },
    withStore,
    events: (continuity) =>
      withStore(async (store) => {
        const events: SpoolEvent[] = [];
        for await (const event of store.read({ continuity })) events.push(event);
        return events;
      }),
    async close() {
      for (const child of running) child.kill();
      await model.close();
      workspace.remove();
    },
  };
}
