import type { TestProject } from "vitest/node";
import { startPostgresServer } from "./postgres-server.js";

/**
 * Vitest global setup: one PostgreSQL server for the whole run, shared by every test file through
 * `inject("postgresUrl")`; each test makes its own database with `createTestDatabase`. Stopped,
 * and its data deleted, when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgresServer();
  project.provide("postgresUrl", server.url);
  return () => server.stop();
}
